import { html } from "htm/preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { isEvent, type CallSummary, type Message, type SearchMatch, type Thread } from "../../../packages/client/src/index.js";
import { CallRow, CallTableHead } from "./calls.js";
import { labelOf, voiceTime } from "./labels.js";
import { useQuery } from "./location.js";
import { apiClient, session } from "./session.js";
import { latestWindow, matchWindow, withLive, withNewer, withOlder, type HistoryWindow } from "./thread-history.js";
import { ErrorNote, Field, formatTime, formValues, usd } from "./ui.js";
import { ToolCalls, toolCallsOf } from "./tool-calls.js";

/** The thread's usage: voice usage when it has calls, messages when it has billed ones, the total always. */
function Usage({ thread, hasCalls }: { thread: Thread | undefined; hasCalls: boolean }) {
  if (!thread) return null;
  const { usage } = thread;
  const voice = hasCalls || usage.voice_minutes > 0;
  const messages = !voice || usage.billable_messages > 0;
  return html`<dl class="usage" aria-label="Usage">
    ${messages ? html`<div><dt>Billable messages</dt><dd>${usage.billable_messages}</dd></div><div><dt>Message cost</dt><dd>${usd(usage.billable_message_cost)}</dd></div>` : null}
    ${voice ? html`<div><dt>Voice time</dt><dd title=${`${usage.voice_minutes} minutes`}>${voiceTime(usage.voice_minutes)}</dd></div><div><dt>Voice cost</dt><dd>${usd(usage.voice_cost)}</dd></div>` : null}
    <div><dt>Total</dt><dd>${usd(usage.total_cost)}</dd></div>
  </dl>`;
}

/** The call a message was spoken in: named by the message itself, else by its conversation's call. */
function callOf(message: Message, callsByConversation: Map<number, CallSummary>): string | undefined {
  const named = (message.extras as { call_id?: unknown }).call_id;
  return typeof named === "string" ? named : callsByConversation.get(message.conversation_id)?.id;
}

/** A message's line above its text; the place where later kinds of messages (tool calls, for one) add their marks. */
function MessageMeta({ message, callId }: { message: Message; callId: string | undefined }) {
  return html`<span class="meta">
    <span title=${message.role}>${labelOf("role", message.role)}</span> ·
    ${callId
      ? html` <${Link} href=${`/calls/${callId}`} title=${`conversation ${message.conversation_id}, call ${callId}`}>Call, conversation ${message.conversation_id}<//>`
      : ` conversation ${message.conversation_id}`} ·
    <time datetime=${new Date(message.timestamp).toISOString()}> ${formatTime(message.timestamp)}</time>
  </span>`;
}

function MessageItem({ message, highlighted, callId }: { message: Message; highlighted: boolean; callId: string | undefined }) {
  return html`<li
    class=${`message ${message.role}${highlighted ? " highlighted" : ""}`}
    id=${`message-${message.message_id}`}
    data-message-id=${message.message_id}
    aria-current=${highlighted ? "true" : undefined}
  >
    <${MessageMeta} message=${message} callId=${callId} />
    <span class="text">${message.message}</span>
    <${ToolCalls} calls=${toolCallsOf(message.extras)} />
  </li>`;
}

/** The thread's calls, newest first (`GET /calls?thread_id=`). */
function ThreadCalls({ calls }: { calls: CallSummary[] }) {
  if (calls.length === 0) return null;
  return html`<section aria-labelledby="thread-calls-title">
    <h2 id="thread-calls-title">Calls</h2>
    <div class="table-wrap"><table class="stack">
      <caption class="visually-hidden">This thread's calls, newest first</caption>
      <${CallTableHead} context="thread" />
      <tbody>${calls.map((call) => html`<${CallRow} key=${call.id} call=${call} context="thread" />`)}</tbody>
    </table></div>
  </section>`;
}

/** A thread: its usage, its history walked by cursors in both directions, search with jumps, chat and live events. */
export function ThreadPage({ threadId }: { threadId: string }) {
  const [thread, setThread] = useState<Thread>();
  const [history, setHistory] = useState<HistoryWindow>({ messages: [], older: null, newer: null });
  const [highlight, setHighlight] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [loadingOlder, setLoadingOlder] = useState(false);
  const [live, setLive] = useState(false);
  const [calls, setCalls] = useState<CallSummary[]>([]);
  const scroller = useRef<HTMLDivElement>(null);
  const topSentinel = useRef<HTMLDivElement>(null);
  /** Where to put the scroll after the next render: the bottom, a message, or the same content after older ones are prepended. */
  const scrollIntent = useRef<{ kind: "bottom" } | { kind: "message"; id: string } | { kind: "keep"; fromBottom: number } | null>(null);

  const refreshThread = () => apiClient().threads.get(threadId).then(setThread, setError);
  const refreshCalls = () => apiClient().calls.list({ thread_id: threadId, limit: 100 }).then((page) => setCalls(page.calls), setError);
  const callsByConversation = new Map(calls.filter((call) => call.conversation_id !== null).map((call) => [call.conversation_id!, call]));
  /** Set by a jump to a search match: the first page of history, if it comes later, must not replace the match's window. */
  const jumped = useRef(false);
  const showLatest = async (initial = false) => {
    const page = await apiClient().messages.list(threadId, { limit: 20 });
    if (initial && jumped.current) return;
    scrollIntent.current = { kind: "bottom" };
    setHighlight(null);
    setHistory(latestWindow(page));
  };

  useEffect(() => {
    void refreshThread();
    void refreshCalls();
    showLatest(true).catch(setError);
    const events = apiClient().events(threadId);
    void events.opened.then(() => setLive(true));
    void (async () => {
      try {
        for await (const event of events) {
          if (event.type === "call.updated") void refreshCalls();
          if (!isEvent(event, "message.created")) continue;
          const { message } = event;
          const shown: Message = { ...message, extras: message.call_id ? { call_id: message.call_id } : {}, timestamp: Date.now(), conversation_end_time: null };
          scrollIntent.current = { kind: "bottom" };
          setHistory((current) => withLive(current, [shown]));
          if (message.role === "assistant") void refreshThread();
        }
      } catch {
        setLive(false);
      }
    })();
    return () => events.close();
  }, [threadId]);

  useLayoutEffect(() => {
    const box = scroller.current;
    const intent = scrollIntent.current;
    if (!box || !intent) return;
    scrollIntent.current = null;
    if (intent.kind === "bottom") box.scrollTop = box.scrollHeight;
    else if (intent.kind === "keep") box.scrollTop = box.scrollHeight - intent.fromBottom;
    else box.querySelector(`#message-${CSS.escape(intent.id)}`)?.scrollIntoView({ block: "center" });
  }, [history]);

  const loadOlder = async () => {
    if (!history.older || loadingOlder) return;
    setLoadingOlder(true);
    try {
      const page = await apiClient().messages.list(threadId, { cursor: history.older, limit: 20 });
      const box = scroller.current;
      scrollIntent.current = { kind: "keep", fromBottom: box ? box.scrollHeight - box.scrollTop : 0 };
      setHistory((current) => withOlder(current, page));
    } catch (failure) {
      setError(failure);
    } finally {
      setLoadingOlder(false);
    }
  };
  const loadNewer = async () => {
    if (!history.newer) return;
    try {
      const page = await apiClient().messages.list(threadId, { cursor: history.newer, newer: true, limit: 20 });
      setHistory((current) => withNewer(current, page));
    } catch (failure) {
      setError(failure);
    }
  };

  // Scrolling up to the top of the history loads the page before it.
  useEffect(() => {
    const sentinel = topSentinel.current;
    if (!sentinel || !scroller.current) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) void loadOlder();
    }, { root: scroller.current });
    observer.observe(sentinel);
    return () => observer.disconnect();
  }, [history.older, loadingOlder]);

  const jump = (match: SearchMatch) => {
    jumped.current = true;
    scrollIntent.current = { kind: "message", id: match.message_id };
    setHighlight(match.message_id);
    setHistory(matchWindow(match));
  };

  return html`
    <section aria-labelledby="thread-title" class="thread">
      <h1 id="thread-title">Thread <code>${thread?.alias ?? threadId}</code></h1>
      <p class="live-status" aria-live="polite">${live ? "● Live: new messages appear as they are stored" : "Connecting to live events…"}</p>
      <${Usage} thread=${thread} hasCalls=${calls.length > 0} />
      <${ThreadCalls} calls=${calls} />
      <${ErrorNote} error=${error} />
      <div class="thread-grid">
        <div class="history-column">
          <h2>History</h2>
          <div class="history" ref=${scroller} tabindex="0" aria-label="Message history; scroll up for older messages">
            <div ref=${topSentinel} class="sentinel"></div>
            ${history.older
              ? html`<button class="link" onClick=${loadOlder} disabled=${loadingOlder}>${loadingOlder ? "Loading…" : "Load older messages"}</button>`
              : html`<p class="edge">Start of the thread</p>`}
            <ol class="messages">
              ${history.messages.map((message) => html`<${MessageItem} key=${message.message_id} message=${message} highlighted=${message.message_id === highlight} callId=${callOf(message, callsByConversation)} />`)}
            </ol>
            ${history.newer
              ? html`<div class="newer-actions">
                  <button class="link" onClick=${loadNewer}>Load newer messages</button>
                  <button class="link" onClick=${() => showLatest().catch(setError)}>Jump to latest</button>
                </div>`
              : null}
          </div>
          <${ChatBox} threadId=${threadId} beforeSend=${async () => (history.newer !== null ? showLatest() : undefined)} onReply=${(messages: Message[]) => {
            scrollIntent.current = { kind: "bottom" };
            setHistory((current) => withLive(current, messages));
            void refreshThread();
          }} />
        </div>
        <${SearchPanel} threadId=${threadId} onJump=${jump} />
      </div>
    </section>
  `;
}

function ChatBox({ threadId, beforeSend, onReply }: { threadId: string; beforeSend: () => Promise<void>; onReply: (messages: Message[]) => void }) {
  /** The reply while it streams; the user's message is already in the history (from the events socket). */
  const [pending, setPending] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const send = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const values = formValues(form);
    const message = values["message"];
    const project = values["project"];
    if (!message || !project) return;
    session.setProject(project);
    setError(undefined);
    await beforeSend();
    setPending("");
    form.reset();
    (form.elements.namedItem("project") as HTMLInputElement).value = project;
    try {
      let reply = "";
      for await (const streamed of apiClient().chat.stream({ thread_id: threadId, message, service_config_name: project })) {
        if (streamed.type === "token") {
          reply += streamed.token;
          setPending(reply);
        } else {
          const { extras } = streamed.response;
          // A chat turn always has its ids (only a dry-run simulation has none).
          if (extras.user_message_id !== null && extras.reply_message_id !== null && extras.conversation_id !== null) {
            const base = { conversation_id: extras.conversation_id, conversation_end_time: null, timestamp: Date.now() };
            onReply([
              { ...base, message_id: extras.user_message_id, role: "user", message, extras: {} },
              { ...base, message_id: extras.reply_message_id, role: "assistant", message: streamed.response.message, extras: extras.tool_calls ? { tool_calls: extras.tool_calls } : {} },
            ]);
          }
        }
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setPending(null);
    }
  };
  return html`
    <form class="chat" onSubmit=${send} aria-label="Chat">
      ${pending !== null
        ? html`<div class="pending" aria-live="polite">
            <p class="message assistant streaming" data-testid="streaming-reply"><span class="text">${pending || "…"}</span></p>
          </div>`
        : null}
      <${ErrorNote} error=${error} />
      <div class="chat-row">
        <${Field} label="Project"><input name="project" defaultValue=${session.project()} required size="10" /><//>
        <${Field} label="Message"><textarea name="message" rows="2" required maxlength="32000" onKeyDown=${(event: KeyboardEvent) => {
          if (event.key === "Enter" && !event.shiftKey) {
            event.preventDefault();
            (event.currentTarget as HTMLTextAreaElement).form?.requestSubmit();
          }
        }}></textarea><//>
        <button type="submit" disabled=${pending !== null}>Send</button>
      </div>
    </form>
  `;
}

/** The text with each case-insensitive occurrence of `needle` marked (the search matches the phrase as typed). */
export function Highlighted({ text, needle }: { text: string; needle: string }) {
  if (!needle) return html`${text}`;
  const parts: (string | ReturnType<typeof html>)[] = [];
  const lower = text.toLowerCase();
  const sought = needle.toLowerCase();
  let from = 0;
  for (let at = lower.indexOf(sought); at !== -1; at = lower.indexOf(sought, at + sought.length)) {
    parts.push(text.slice(from, at), html`<mark>${text.slice(at, at + sought.length)}</mark>`);
    from = at + sought.length;
  }
  parts.push(text.slice(from));
  return html`${parts}`;
}

/**
 * Search in the thread. The words searched for and the match jumped to are in the URL (`?q=…&at=…`), so that a link
 * or a reload opens the same match in its context.
 */
function SearchPanel({ threadId, onJump }: { threadId: string; onJump: (match: SearchMatch) => void }) {
  const [params, setParams] = useQuery();
  const query = params.get("q") ?? "";
  const at = params.get("at");
  const [matches, setMatches] = useState<SearchMatch[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [searched, setSearched] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const search = async (text: string, from: string | null) => {
    setError(undefined);
    try {
      const page = await apiClient().messages.search(threadId, { query: text, context: 2, limit: 10, ...(from ? { cursor: from } : {}) });
      setMatches((current) => (from ? [...current, ...page.matches] : page.matches));
      setCursor(page.pagination.cursor);
      setSearched(text);
      return page.matches;
    } catch (failure) {
      setError(failure);
      return [];
    }
  };
  useEffect(() => {
    if (!query) {
      setMatches([]);
      setSearched(null);
      return;
    }
    if (query === searched) return;
    void search(query, null).then((found) => {
      const opened = at ? found.find((match) => match.message_id === at) : undefined;
      if (opened) onJump(opened);
    });
  }, [query]);
  return html`
    <aside class="search" aria-labelledby="search-title">
      <h2 id="search-title">Search</h2>
      <form role="search" key=${query} onSubmit=${(event: Event) => {
        event.preventDefault();
        setParams({ q: formValues(event.currentTarget as HTMLFormElement)["query"] ?? "" });
      }}>
        <${Field} label="Text in this thread"><input name="query" type="search" required maxlength="500" defaultValue=${query} /><//>
        <button type="submit">Search</button>
      </form>
      <${ErrorNote} error=${error} />
      ${searched !== null && matches.length === 0 ? html`<p>No match.</p>` : null}
      <ol class="matches">
        ${matches.map((match) => {
          const hit = match.context.find((message) => message.message_id === match.message_id);
          const text = hit?.message ?? "";
          return html`<li key=${match.message_id} class=${match.message_id === at ? "opened" : ""}>
            <p class="match-meta"><span title=${hit?.role ?? ""}>${labelOf("role", hit?.role)}</span> · <time datetime=${hit ? new Date(hit.timestamp).toISOString() : ""}>${hit ? formatTime(hit.timestamp) : ""}</time></p>
            <p class="snippet"><${Highlighted} text=${text} needle=${searched ?? ""} /></p>
            <button class="jump" onClick=${() => {
              setParams({ q: query, at: match.message_id }, { replace: true });
              onJump(match);
            }} aria-label=${`Jump to “${text.slice(0, 40)}” in context`}>Jump to context</button>
          </li>`;
        })}
      </ol>
      ${cursor ? html`<button class="link" onClick=${() => search(query, cursor)}>More matches</button>` : null}
    </aside>
  `;
}
