import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import type { ThreadListItem, ThreadListQuery } from "../../../packages/client/src/index.js";
import { apiClient, session } from "./session.js";
import { ErrorNote, Field, formatDate, formValues, usd } from "./ui.js";

/** The organization's threads, newest first, a cursor page at a time, with the project and type filters. */
export function ThreadsPage() {
  const [filters, setFilters] = useState<ThreadListQuery>({});
  const [threads, setThreads] = useState<ThreadListItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const [, navigate] = useLocation();

  const load = async (query: ThreadListQuery, append: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await apiClient().threads.list({ limit: 20, ...query });
      setThreads((current) => (append ? [...current, ...page.threads] : page.threads));
      setCursor(page.pagination.cursor);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => void load(filters, false), [filters]);

  const filter = (event: Event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget as HTMLFormElement);
    setFilters({
      ...(values["project_name"] ? { project_name: values["project_name"] } : {}),
      ...(values["type"] === "NORMAL" || values["type"] === "SIMULATION" ? { type: values["type"] } : {}),
    });
  };
  const create = async (event: Event) => {
    event.preventDefault();
    const project = formValues(event.currentTarget as HTMLFormElement)["project"];
    try {
      const { thread_id } = await apiClient().threads.create(project ? { project_name: project } : {});
      if (project) session.setProject(project);
      navigate(`/threads/${thread_id}`);
    } catch (failure) {
      setError(failure);
    }
  };

  return html`
    <section aria-labelledby="threads-title">
      <h1 id="threads-title">Threads</h1>
      <div class="toolbar">
        <form class="filters" onSubmit=${filter} aria-label="Filter threads">
          <${Field} label="Project"><input name="project_name" placeholder="any" /><//>
          <${Field} label="Type">
            <select name="type"><option value="">any</option><option>NORMAL</option><option>SIMULATION</option></select>
          <//>
          <button type="submit">Filter</button>
        </form>
        <form class="filters" onSubmit=${create} aria-label="New thread">
          <${Field} label="New thread in project"><input name="project" defaultValue=${session.project()} /><//>
          <button type="submit">Create thread</button>
        </form>
      </div>
      <${ErrorNote} error=${error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Threads, newest first</caption>
          <thead><tr><th scope="col">Thread</th><th scope="col">Type</th><th scope="col">Project</th><th scope="col">Created</th><th scope="col">Messages billed</th><th scope="col">Total cost</th></tr></thead>
          <tbody>
            ${threads.map(
              (thread) => html`<tr key=${thread.id}>
                <td><${Link} href=${`/threads/${thread.id}`} onClick=${() => thread.project_name && session.setProject(thread.project_name)}>${thread.alias ?? thread.id}<//></td>
                <td>${thread.type}</td>
                <td>${thread.project_name ?? "—"}</td>
                <td>${formatDate(thread.created_at)}</td>
                <td>${thread.usage.billable_messages}</td>
                <td>${usd(thread.usage.total_cost)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${threads.length === 0 && !loading ? html`<p>No threads yet.</p>` : null}
      ${cursor ? html`<button onClick=${() => load({ ...filters, cursor }, true)} disabled=${loading}>Load more threads</button>` : null}
    </section>
  `;
}
