import { useEffect, useState } from "preact/hooks";

/**
 * The console's address lives in the URL's hash, path and query both (`#/calls?status=ended`), so that a filtered
 * view or a search can be shared and survives a reload, and one page (/console) serves every screen. wouter's own
 * hash hook keeps the query in the real `?search`, where it would outlive the screen it belongs to.
 */
const pathOf = () => "/" + location.hash.replace(/^#?\/?/, "").split("?")[0];
const searchOf = () => location.hash.split("?")[1] ?? "";

function useHash<T>(read: () => T): T {
  const [value, setValue] = useState(read);
  useEffect(() => {
    const changed = () => setValue(read);
    addEventListener("hashchange", changed);
    return () => removeEventListener("hashchange", changed);
  }, []);
  return value;
}

export function navigate(to: string, { replace = false }: { replace?: boolean } = {}): void {
  const oldURL = location.href;
  history[replace ? "replaceState" : "pushState"](null, "", `#${to}`);
  dispatchEvent(new HashChangeEvent("hashchange", { oldURL, newURL: location.href }));
}

/** The location hook for wouter's Router: the hash's path only. */
export function useConsoleLocation(): [string, (to: string, options?: { replace?: boolean }) => void] {
  return [useHash(pathOf), navigate];
}
useConsoleLocation.hrefs = (href: string) => `#${href}`;
useConsoleLocation.searchHook = () => useHash(searchOf);

/** The screen's query (from the hash), and a way to replace it; empty values are left out of the URL. */
export function useQuery(): [URLSearchParams, (values: Record<string, string | string[] | undefined>, options?: { replace?: boolean }) => void] {
  const search = useHash(searchOf);
  const set = (values: Record<string, string | string[] | undefined>, options: { replace?: boolean } = {}) => {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(values)) {
      for (const item of Array.isArray(value) ? value : [value]) if (item !== undefined && item !== "") params.append(key, item);
    }
    const query = params.toString();
    navigate(`${pathOf()}${query ? `?${query}` : ""}`, options);
  };
  return [new URLSearchParams(search), set];
}
