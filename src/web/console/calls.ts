import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { CallListQuery, CallSummary } from "../../../packages/client/src/index.js";
import { apiClient } from "./session.js";
import { ErrorNote, Field, formatDate } from "./ui.js";

const statuses = ["queued", "scheduled", "ongoing", "ended", "error"] as const;
const callTypes = ["phone_call", "web_call"] as const;
const directions = ["inbound", "outbound"] as const;

function Choices({ name, legend, values }: { name: string; legend: string; values: readonly string[] }) {
  return html`<fieldset class="choices"><legend>${legend}</legend>
    ${values.map((value) => html`<label key=${value}><input type="checkbox" name=${name} value=${value} /> ${value.replace("_", " ")}</label>`)}
  </fieldset>`;
}

function queryOf(form: HTMLFormElement): CallListQuery {
  const data = new FormData(form);
  const all = (name: string) => data.getAll(name).filter((value): value is string => typeof value === "string");
  const one = (name: string) => {
    const value = data.get(name);
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const query: CallListQuery = {};
  const status = all("status").filter((value): value is (typeof statuses)[number] => (statuses as readonly string[]).includes(value));
  const callType = all("call_type").filter((value): value is (typeof callTypes)[number] => (callTypes as readonly string[]).includes(value));
  const direction = all("direction").filter((value): value is (typeof directions)[number] => (directions as readonly string[]).includes(value));
  if (status.length) query.status = status;
  if (callType.length) query.call_type = callType;
  if (direction.length) query.direction = direction;
  for (const key of ["from_date", "to_date", "thread_id", "project_name"] as const) {
    const value = one(key);
    if (value !== undefined) query[key] = value;
  }
  return query;
}

/** The organization's calls with every filter of `GET /calls`. */
export function CallsPage() {
  const [query, setQuery] = useState<CallListQuery>({});
  const [calls, setCalls] = useState<CallSummary[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const load = async (filters: CallListQuery, append: boolean) => {
    setError(undefined);
    try {
      const page = await apiClient().calls.list({ limit: 20, ...filters });
      setCalls((current) => (append ? [...current, ...page.calls] : page.calls));
      setCursor(page.pagination.cursor);
    } catch (failure) {
      setError(failure);
    }
  };
  useEffect(() => void load(query, false), [query]);
  return html`
    <section aria-labelledby="calls-title">
      <h1 id="calls-title">Calls</h1>
      <form class="filters calls-filters" aria-label="Filter calls" onSubmit=${(event: Event) => {
        event.preventDefault();
        setQuery(queryOf(event.currentTarget as HTMLFormElement));
      }}>
        <${Choices} name="status" legend="Status" values=${statuses} />
        <${Choices} name="call_type" legend="Type" values=${callTypes} />
        <${Choices} name="direction" legend="Direction" values=${directions} />
        <${Field} label="From"><input type="date" name="from_date" /><//>
        <${Field} label="To"><input type="date" name="to_date" /><//>
        <${Field} label="Thread id"><input name="thread_id" /><//>
        <${Field} label="Project"><input name="project_name" /><//>
        <button type="submit">Filter</button>
      </form>
      <${ErrorNote} error=${error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Calls, newest first</caption>
          <thead><tr><th scope="col">Call</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">To</th><th scope="col">Created</th><th scope="col">Duration</th><th scope="col">Ended because</th></tr></thead>
          <tbody>
            ${calls.map(
              (call) => html`<tr key=${call.id}>
                <td><${Link} href=${`/calls/${call.id}`}>${call.id.slice(0, 13)}…<//></td>
                <td>${call.call_type}</td>
                <td><span class=${`status ${call.status}`}>${call.status}</span></td>
                <td>${call.to_number ?? "—"}</td>
                <td>${formatDate(call.created_at)}</td>
                <td>${call.duration_ms === null ? "—" : `${(call.duration_ms / 1000).toFixed(1)} s`}</td>
                <td>${call.disconnection_reason ?? "—"}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${calls.length === 0 ? html`<p>No calls match.</p>` : null}
      ${cursor ? html`<button onClick=${() => load({ ...query, cursor }, true)}>Load more calls</button>` : null}
    </section>
  `;
}
