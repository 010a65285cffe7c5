import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import type { ThreadListItem, ThreadListQuery } from "../../../packages/client/src/index.js";
import { Label, sinceText } from "./labels.js";
import { useQuery } from "./location.js";
import { apiClient, session } from "./session.js";
import { ErrorNote, Field, formatDate, formValues, usd } from "./ui.js";

function filtersOf(query: URLSearchParams): ThreadListQuery {
  const project = query.get("project_name");
  const type = query.get("type");
  return {
    ...(project ? { project_name: project } : {}),
    ...(type === "NORMAL" || type === "SIMULATION" ? { type } : {}),
  };
}

/** What the thread was about, in the user's own first words; the alias or id when nobody has written yet. */
function ThreadName({ thread }: { thread: ThreadListItem }) {
  const name = thread.alias ?? thread.id;
  return html`<${Link} href=${`/threads/${thread.id}`} class="thread-name" onClick=${() => thread.project_name && session.setProject(thread.project_name)}>
      ${thread.first_user_message ? `“${thread.first_user_message.length > 90 ? `${thread.first_user_message.slice(0, 88)}…` : thread.first_user_message}”` : name}
    <//>
    ${thread.first_user_message ? html`<br /><small class="hint" title=${thread.id}>${name}</small>` : html`<br /><small class="hint">No user message yet</small>`}`;
}

/** Messages and voice minutes, each shown only when the thread has some: a call-only thread reads as one. */
function Activity({ thread }: { thread: ThreadListItem }) {
  const parts: string[] = [`${thread.message_count} message${thread.message_count === 1 ? "" : "s"}`];
  if (thread.call_count > 0) parts.push(`${thread.call_count} call${thread.call_count === 1 ? "" : "s"}`);
  if (thread.usage.voice_minutes > 0) parts.push(`${thread.usage.voice_minutes.toFixed(1)} voice min`);
  return html`${parts.join(" · ")}`;
}

/** The organization's threads, newest first, a cursor page at a time, with the project and type filters in the URL. */
export function ThreadsPage() {
  const [query, setQuery] = useQuery();
  const filters = filtersOf(query);
  const filterKey = JSON.stringify(filters);
  const [threads, setThreads] = useState<ThreadListItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(false);
  const [, navigate] = useLocation();

  const load = async (listQuery: ThreadListQuery, append: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await apiClient().threads.list({ limit: 20, ...listQuery });
      setThreads((current) => (append ? [...current, ...page.threads] : page.threads));
      setCursor(page.pagination.cursor);
    } catch (failure) {
      setError(failure);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => void load(filters, false), [filterKey]);

  const filter = (event: Event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget as HTMLFormElement);
    setQuery({ project_name: values["project_name"], type: values["type"] });
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
        <form class="filters" onSubmit=${filter} aria-label="Filter threads" key=${filterKey}>
          <${Field} label="Project"><input name="project_name" placeholder="Any project" defaultValue=${filters.project_name ?? ""} /><//>
          <${Field} label="Type">
            <select name="type">
              ${[["", "Any"], ["NORMAL", "Conversation"], ["SIMULATION", "Simulation"]].map(([value, label]) => html`<option value=${value} selected=${(filters.type ?? "") === value}>${label}</option>`)}
            </select>
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
        <table class="threads-table">
          <caption class="visually-hidden">Threads, newest first</caption>
          <thead><tr><th scope="col">Thread</th><th scope="col">Last activity</th><th scope="col">Project</th><th scope="col">Type</th><th scope="col">Activity</th><th scope="col">Cost</th></tr></thead>
          <tbody>
            ${threads.map(
              (thread) => html`<tr key=${thread.id}>
                <td class="thread-cell"><${ThreadName} thread=${thread} /></td>
                <td><time datetime=${thread.last_activity_at} title=${formatDate(thread.last_activity_at)}>${sinceText(thread.last_activity_at)}</time></td>
                <td>${thread.project_name ?? html`<span title="null">None</span>`}</td>
                <td><${Label} kind="thread_type" value=${thread.type} /></td>
                <td><${Activity} thread=${thread} /></td>
                <td>${usd(thread.usage.total_cost)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${threads.length === 0 && !loading ? html`<p>${Object.keys(filters).length ? "No thread matches these filters." : "No threads yet."}</p>` : null}
      ${cursor ? html`<button onClick=${() => load({ ...filters, cursor }, true)} disabled=${loading}>Load more threads</button>` : null}
    </section>
  `;
}
