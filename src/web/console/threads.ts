import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { NotFoundError, type CallSummary, type Thread, type ThreadListItem, type ThreadListQuery } from "../../../packages/client/src/index.js";
import { CallRow, CallTableHead } from "./calls.js";
import { Label, sinceText, voiceTime } from "./labels.js";
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

/** Messages, calls and the time spent on them, each shown only when the thread has some: a call-only thread reads as one. */
function Activity({ thread }: { thread: ThreadListItem }) {
  const parts: string[] = [`${thread.message_count} message${thread.message_count === 1 ? "" : "s"}`];
  if (thread.call_count > 0) parts.push(`${thread.call_count} call${thread.call_count === 1 ? "" : "s"}`);
  if (thread.usage.voice_minutes > 0) parts.push(`${voiceTime(thread.usage.voice_minutes)} on calls`);
  return html`${parts.join(" · ")}`;
}

/** How many calls the alias's thread shows, newest first. */
const aliasCallLimit = 20;

/** The thread an alias names, with its newest calls; `null` when no thread has that alias. */
type AliasMatch = { thread: Thread; calls: CallSummary[]; moreCalls: boolean } | null;

/**
 * The thread with exactly this alias, a caller's phone number for one (`GET /threads/by-alias/{alias}`: the list
 * endpoint has no alias filter), with its calls, which say who called and when.
 */
function AliasResult({ alias }: { alias: string }) {
  const [match, setMatch] = useState<AliasMatch>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    setMatch(undefined);
    setError(undefined);
    void (async () => {
      try {
        const client = apiClient();
        const thread = await client.threads.byAlias(alias);
        const page = await client.calls.list({ thread_id: thread.id, limit: aliasCallLimit });
        setMatch({ thread, calls: page.calls, moreCalls: page.pagination.cursor !== null });
      } catch (failure) {
        if (failure instanceof NotFoundError) setMatch(null);
        else setError(failure);
      }
    })();
  }, [alias]);
  if (error) return html`<${ErrorNote} error=${error} />`;
  if (match === undefined) return html`<p>Looking for the alias…</p>`;
  if (match === null) return html`<p role="status">No thread has the alias <code>${alias}</code>.</p>`;
  const { thread, calls, moreCalls } = match;
  const facts = [
    calls.length === 0 ? "no calls" : `${calls.length}${moreCalls ? "+" : ""} call${calls.length === 1 ? "" : "s"}`,
    `${thread.usage.billable_messages} billed message${thread.usage.billable_messages === 1 ? "" : "s"}`,
    ...(thread.usage.voice_minutes > 0 ? [`${voiceTime(thread.usage.voice_minutes)} on calls`] : []),
    usd(thread.usage.total_cost),
  ];
  return html`<section class="card alias-match" aria-labelledby="alias-match-title">
    <h2 id="alias-match-title"><${Link} href=${`/threads/${thread.id}`} title=${thread.id}>Thread ${thread.alias}<//></h2>
    <p class="hint" data-testid="alias-facts">${facts.join(" · ")}</p>
    ${calls.length > 0
      ? html`<div class="table-wrap"><table class="stack">
          <caption class="visually-hidden">The thread's calls, newest first</caption>
          <${CallTableHead} context="thread" />
          <tbody>${calls.map((call) => html`<${CallRow} key=${call.id} call=${call} context="thread" />`)}</tbody>
        </table></div>`
      : null}
  </section>`;
}

/**
 * The organization's threads, newest first, a cursor page at a time, with the project and type filters in the URL;
 * or, with `alias` in the URL, the one thread of that alias.
 */
export function ThreadsPage() {
  const [query, setQuery] = useQuery();
  const filters = filtersOf(query);
  const filterKey = JSON.stringify(filters);
  const alias = query.get("alias");
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
  useEffect(() => {
    if (!alias) void load(filters, false);
  }, [filterKey, alias]);

  const filter = (event: Event) => {
    event.preventDefault();
    const values = formValues(event.currentTarget as HTMLFormElement);
    setQuery({ project_name: values["project_name"], type: values["type"] });
  };
  const findAlias = (event: Event) => {
    event.preventDefault();
    setQuery({ alias: formValues(event.currentTarget as HTMLFormElement)["alias"]?.trim() });
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

  const list = html`
    <div class="table-wrap">
      <table class="threads-table stack">
        <caption class="visually-hidden">Threads, newest first</caption>
        <thead><tr><th scope="col">Thread</th><th scope="col">Last activity</th><th scope="col">Project</th><th scope="col">Type</th><th scope="col">Activity</th><th scope="col">Cost</th></tr></thead>
        <tbody>
          ${threads.map(
            (thread) => html`<tr key=${thread.id}>
              <td class="thread-cell span"><${ThreadName} thread=${thread} /></td>
              <td data-label="Last activity"><time datetime=${thread.last_activity_at} title=${formatDate(thread.last_activity_at)}>${sinceText(thread.last_activity_at)}</time></td>
              <td data-label="Project">${thread.project_name ?? html`<span title="null">None</span>`}</td>
              <td data-label="Type"><${Label} kind="thread_type" value=${thread.type} /></td>
              <td data-label="Activity"><${Activity} thread=${thread} /></td>
              <td data-label="Cost">${usd(thread.usage.total_cost)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${threads.length === 0 && !loading ? html`<p>${Object.keys(filters).length ? "No thread matches these filters." : "No threads yet."}</p>` : null}
    ${cursor ? html`<button onClick=${() => load({ ...filters, cursor }, true)} disabled=${loading}>Load more threads</button>` : null}
  `;

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
        <form class="filters" onSubmit=${findAlias} aria-label="Find a thread by its alias" key=${`alias-${alias ?? ""}`}>
          <${Field} label="Alias"><input name="alias" type="search" maxlength="200" placeholder="e.g. +14155550123" defaultValue=${alias ?? ""} /><//>
          <button type="submit">Find</button>
        </form>
        <form class="filters" onSubmit=${create} aria-label="New thread">
          <${Field} label="New thread in project"><input name="project" defaultValue=${session.project()} /><//>
          <button type="submit">Create thread</button>
        </form>
      </div>
      <${ErrorNote} error=${error} />
      ${alias ? html`<p><${Link} href="/threads">All threads<//></p><${AliasResult} alias=${alias} />` : list}
    </section>
  `;
}
