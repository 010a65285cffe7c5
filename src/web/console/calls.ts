import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { CallListQuery, CallSummary } from "../../../packages/client/src/index.js";
import { CallDuration, Label, labelOf, StatusPill, Unknown } from "./labels.js";
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

/** A phone number, or "Unknown" (with the raw null in its tooltip) when the call record has none. */
function PhoneNumber({ value }: { value: string | null }) {
  return value === null ? html`<${Unknown} />` : html`<span class="number">${value}</span>`;
}

/** Who called whom: "From → To" for a phone call; a web call has no numbers, it comes from a browser. */
export function Numbers({ call }: { call: Pick<CallSummary, "call_type" | "from_number" | "to_number"> }) {
  if (call.call_type === "web_call") return html`<span title="web calls have no phone number">Browser</span>`;
  return html`<span class="numbers"><${PhoneNumber} value=${call.from_number} /> <span aria-label="to">→</span> <${PhoneNumber} value=${call.to_number} /></span>`;
}

/**
 * A call's row, shared by the call list and a thread's calls: the list links each call's thread, a thread's page
 * names the conversation each call holds instead.
 */
export function CallRow({ call, context = "list" }: { call: CallSummary; context?: "list" | "thread" }) {
  return html`<tr key=${call.id} data-call-id=${call.id}>
    <td data-label="Call"><${Link} href=${`/calls/${call.id}`} title=${call.id}>${formatDate(call.created_at)}<//></td>
    <td data-label="Type"><${Label} kind="call_type" value=${call.call_type} />${call.direction ? html` · <${Label} kind="direction" value=${call.direction} />` : null}</td>
    <td data-label="Status"><${StatusPill} status=${call.status} /></td>
    <td data-label="From → To" class="span"><${Numbers} call=${call} /></td>
    <td data-label="Duration"><${CallDuration} milliseconds=${call.duration_ms} /></td>
    <td data-label="Ended because"><${Label} kind="disconnection_reason" value=${call.disconnection_reason} /></td>
    ${context === "list"
      ? html`<td data-label="Thread"><${Link} href=${`/threads/${call.thread_id}`} title=${call.thread_id}>Thread<//></td>`
      : html`<td data-label="Conversation">${call.conversation_id === null ? html`<${Unknown} />` : `Conversation ${call.conversation_id}`}</td>`}
  </tr>`;
}

export function CallTableHead({ context = "list" }: { context?: "list" | "thread" }) {
  return html`<thead><tr><th scope="col">Call</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">From → To</th><th scope="col">Duration</th><th scope="col">Ended because</th><th scope="col">${context === "list" ? "Thread" : "Conversation"}</th></tr></thead>`;
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
      <form class="calls-filters" aria-label="Filter calls" key=${queryKey} onSubmit=${(event: Event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget as HTMLFormElement);
        const values: Record<string, string[]> = {};
        for (const [key, value] of data) if (typeof value === "string" && value !== "") (values[key] ??= []).push(value);
        setParams(values);
      }}>
        <div class="filter-row">
          <${Choices} name="status" legend="Status" kind="status" values=${statuses} chosen=${query.status ?? []} />
          <${Choices} name="call_type" legend="Type" kind="call_type" values=${callTypes} chosen=${query.call_type ?? []} />
          <${Choices} name="direction" legend="Direction" kind="direction" values=${directions} chosen=${query.direction ?? []} />
        </div>
        <div class="filter-row">
          <${Field} label="Created from"><input type="date" name="from_date" defaultValue=${query.from_date ?? ""} /><//>
          <${Field} label="Created until"><input type="date" name="to_date" defaultValue=${query.to_date ?? ""} /><//>
          <${Field} label="Thread id"><input name="thread_id" defaultValue=${query.thread_id ?? ""} /><//>
          <${Field} label="Project"><input name="project_name" defaultValue=${query.project_name ?? ""} /><//>
          <button type="submit">Filter</button>
        </div>
      </form>
      <${ErrorNote} error=${error} />
      <div class="table-wrap">
        <table class="stack">
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
