import { lookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";

/** Loopback, private, link-local, shared (CGNAT), unspecified, multicast and reserved ranges: never a tool's receiver. */
const internalRanges = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  internalRanges.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
] as const) {
  internalRanges.addSubnet(network, prefix, "ipv6");
}

/** Whether an address is one a tool request must not reach; an IPv4 address mapped into IPv6 is judged as IPv4. */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return internalRanges.check(mapped[1], "ipv4");
  const family = isIP(address);
  if (family === 0) return true;
  return internalRanges.check(address, family === 4 ? "ipv4" : "ipv6");
}

/** Raised by the guarded lookup; the transport reports it as a refused address, not a network failure. */
export class RefusedAddressError extends Error {}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for `http.request` that resolves the name and refuses it when any of its addresses is internal. The
 * connection goes to an address checked here, so a name that resolves differently a moment later (DNS rebinding)
 * cannot slip through.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const internal = addresses.find((entry) => isInternalAddress(entry.address));
    if (internal) return callback(new RefusedAddressError(`${hostname} resolves to ${internal.address}, an internal address`), []);
    const [first] = addresses;
    if (!first) return callback(new RefusedAddressError(`${hostname} has no address`), []);
    if (options.all) return callback(null, addresses);
    callback(null, first.address, first.family);
  });
}
