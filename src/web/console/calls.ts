import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { CallListQuery, CallSummary } from "../../../packages/client/src/index.js";
import { duration, Label, labelOf, StatusPill, Unknown } from "./labels.js";
import { useQuery } from "./location.js";
import { apiClient } from "./session.js";
import { ErrorNote, Field, formatDate } from "./ui.js";

const statuses = ["queued", "scheduled", "ongoing", "ended", "error"] as const;
const callTypes = ["phone_call", "web_call"] as const;
const directions = ["inbound", "outbound"] as const;
const textFilters = ["from_date", "to_date", "thread_id", "project_name"] as const;

function Choices({ name, legend, values, kind, chosen }: { name: string; legend: string; values: readonly string[]; kind: "status" | "call_type" | "direction"; chosen: string[] }) {
  return html`<fieldset class="choices"><legend>${legend}</legend>
    ${values.map((value) => html`<label key=${value} title=${value}><input type="checkbox" name=${name} value=${value} defaultChecked=${chosen.includes(value)} /> ${labelOf(kind, value)}</label>`)}
  </fieldset>`;
}

function only<T extends string>(values: string[], allowed: readonly T[]): T[] {
  return values.filter((value): value is T => (allowed as readonly string[]).includes(value));
}

/** The list query the URL names (its unknown values left out). */
function queryOf(params: URLSearchParams): CallListQuery {
  const query: CallListQuery = {};
  const status = only(params.getAll("status"), statuses);
  const callType = only(params.getAll("call_type"), callTypes);
  const direction = only(params.getAll("direction"), directions);
  if (status.length) query.status = status;
  if (callType.length) query.call_type = callType;
  if (direction.length) query.direction = direction;
  for (const key of textFilters) {
    const value = params.get(key);
    if (value) query[key] = value;
  }
  return query;
}

/** A call's row: shared by the call list and a thread's calls, which another screen may extend with more columns. */
export function CallRow({ call, showThread = true }: { call: CallSummary; showThread?: boolean }) {
  return html`<tr key=${call.id}>
    <td><${Link} href=${`/calls/${call.id}`} title=${call.id}>${formatDate(call.created_at)}<//></td>
    <td><${Label} kind="call_type" value=${call.call_type} />${call.direction ? html` · <${Label} kind="direction" value=${call.direction} />` : null}</td>
    <td><${StatusPill} status=${call.status} /></td>
    <td>${call.call_type === "web_call" ? html`<span title="web calls have no phone number">Browser</span>` : call.to_number ?? html`<${Unknown} />`}</td>
    <td>${duration(call.duration_ms)}</td>
    <td><${Label} kind="disconnection_reason" value=${call.disconnection_reason} /></td>
    ${showThread ? html`<td><${Link} href=${`/threads/${call.thread_id}`} title=${call.thread_id}>Thread<//></td>` : null}
  </tr>`;
}

export function CallTableHead({ showThread = true }: { showThread?: boolean }) {
  return html`<thead><tr><th scope="col">Call</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">To</th><th scope="col">Duration</th><th scope="col">Ended because</th>${showThread ? html`<th scope="col">Thread</th>` : null}</tr></thead>`;
}

/** The organization's calls with every filter of `GET /calls`, kept in the URL. */
export function CallsPage() {
  const [params, setParams] = useQuery();
  const query = queryOf(params);
  const queryKey = JSON.stringify(query);
  const [calls, setCalls] = useState<CallSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loaded, setLoaded] = useState(false);
  const load = async (filters: CallListQuery, append: boolean) => {
    setError(undefined);
    try {
      const page = await apiClient().calls.list({ limit: 20, ...filters });
      setCalls((current) => (append ? [...current, ...page.calls] : page.calls));
      setCursor(page.pagination.cursor);
      setLoaded(true);
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => void load(query, false), [queryKey]);
  return html`
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Calls</h1>
      <form class="filters calls-filters" aria-label="Filter calls" key=${queryKey} onSubmit=${(event: Event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget as HTMLFormElement);
        const values: Record<string, string[]> = {};
        for (const [key, value] of data) if (typeof value === "string" && value !== "") (values[key] ??= []).push(value);
        setParams(values);
      }}>
        <${Choices} name="status" legend="Status" kind="status" values=${statuses} chosen=${query.status ?? []} />
        <${Choices} name="call_type" legend="Type" kind="call_type" values=${callTypes} chosen=${query.call_type ?? []} />
        <${Choices} name="direction" legend="Direction" kind="direction" values=${directions} chosen=${query.direction ?? []} />
        <${Field} label="From"><input type="date" name="from_date" defaultValue=${query.from_date ?? ""} /><//>
        <${Field} label="To"><input type="date" name="to_date" defaultValue=${query.to_date ?? ""} /><//>
        <${Field} label="Thread id"><input name="thread_id" defaultValue=${query.thread_id ?? ""} /><//>
        <${Field} label="Project"><input name="project_name" defaultValue=${query.project_name ?? ""} /><//>
        <button type="submit">Filter</button>
      </form>
      <${ErrorNote} error=${error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Calls, newest first</caption>
          <${CallTableHead} />
          <tbody>${calls.map((call) => html`<${CallRow} key=${call.id} call=${call} />`)}</tbody>
        </table>
      </div>
      ${loaded && calls.length === 0 ? html`<p>No calls match.</p>` : null}
      ${cursor ? html`<button onClick=${() => load({ ...query, cursor }, true)}>Load more calls</button>` : null}
    </section>
  `;
}
