import { html } from "htm/preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import type { CallDetail, ThreadEvent, ToolCall } from "../../../packages/client/src/index.js";
import { CallDuration, clock, Label, StatusPill, Unknown, When } from "./labels.js";
import { apiClient } from "./session.js";
import { ErrorNote, formatDate } from "./ui.js";
import { ToolCalls, toolCallsOf } from "./tool-calls.js";

/** The call's agent turns that called tools, from the thread's history (newest pages first, back to the call's start). */
async function toolTurnsOf(threadId: string, callId: string, since: string): Promise<{ id: string; text: string; calls: ToolCall[] }[]> {
  const turns: { id: string; text: string; calls: ToolCall[] }[] = [];
  for await (const page of apiClient().messages.pages(threadId)) {
    for (const message of page.messages) {
      const calls = toolCallsOf(message.extras);
      if (message.extras["call_id"] === callId && calls.length > 0) turns.push({ id: message.message_id, text: message.message, calls });
    }
    const oldest = page.messages[0];
    if (!oldest || new Date(oldest.timestamp).getTime() < new Date(since).getTime()) break;
  }
  return turns.reverse();
}

type Utterance = NonNullable<CallDetail["transcript_object"]>[number];

/** Letters and digits only, lower case: how a transcript's word and its written form are matched. */
const bare = (text: string) => text.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");

/**
 * The utterance as written (its `content`, punctuation and capitals kept), each token tied to its timed word when the
 * two line up; a token with no timed word is shown as plain text. When they do not line up, the timed words alone.
 */
export function writtenTokens(utterance: Utterance): { text: string; word: number | null }[] {
  const tokens = utterance.content.split(/\s+/).filter(Boolean);
  const out: { text: string; word: number | null }[] = [];
  let next = 0;
  for (const token of tokens) {
    const timed = utterance.words[next];
    if (timed && bare(token) !== "" && bare(token) === bare(timed.word)) out.push({ text: token, word: next++ });
    else out.push({ text: token, word: null });
  }
  return next === utterance.words.length ? out : utterance.words.map((word, index) => ({ text: word.word, word: index }));
}

interface TimedWord {
  start: number;
  /** Its position in the transcript as displayed. */
  index: number;
}

/** The index of the word being spoken at `seconds`: the last word that has started (it stays lit through a pause). */
function wordAt(words: TimedWord[], seconds: number): number {
  let low = 0;
  let high = words.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (words[middle]!.start <= seconds) {
      found = middle;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/** Whether a thread event concerns this call (its status, one of its utterances, its analysis). */
function concerns(event: ThreadEvent, callId: string): boolean {
  if (event.type === "call.updated") return (event as { call?: { id?: string } }).call?.id === callId;
  if (event.type === "message.created") return (event as { message?: { call_id?: string } }).message?.call_id === callId;
  return (event as { call_id?: unknown }).call_id === callId;
}

/** A call: its details, the recording with the transcript lit word by word as it plays, the analysis; live while it runs. */
export function CallPage({ callId }: { callId: string }) {
  const [call, setCall] = useState<CallDetail>();
  const [error, setError] = useState<unknown>();
  const [current, setCurrent] = useState(-1);
  const [toolTurns, setToolTurns] = useState<{ id: string; text: string; calls: ToolCall[] }[]>([]);
  const audio = useRef<HTMLAudioElement>(null);
  const lastRecordingRetry = useRef(0);
  const refresh = () => apiClient().calls.get(callId).then(setCall, setError);
  /** A signed recording URL expires (10 minutes by default): a failed load asks for a fresh one, at most twice a minute. */
  const retryRecording = () => {
    if (Date.now() - lastRecordingRetry.current < 30_000) return;
    lastRecordingRetry.current = Date.now();
    void refresh();
  };

  useEffect(() => void refresh(), [callId]);
  const threadId = call?.thread_id;
  useEffect(() => {
    if (threadId && call) void toolTurnsOf(threadId, callId, call.created_at).then(setToolTurns, setError);
  }, [threadId, callId, call?.status]);
  useEffect(() => {
    if (!threadId) return;
    const events = apiClient().events(threadId);
    void (async () => {
      try {
        for await (const event of events) if (concerns(event, callId)) void refresh();
      } catch (failure) {
        setError(failure);
      }
    })();
    return () => events.close();
  }, [threadId, callId]);

  const words = useMemo<TimedWord[]>(
    () =>
      (call?.transcript_object ?? [])
        .flatMap((utterance) => utterance.words)
        .map((word, index) => ({ start: word.start, index }))
        .sort((a, b) => a.start - b.start),
    [call?.transcript_object],
  );

  // timeupdate fires only a few times a second: while playing, the highlight follows every animation frame.
  useEffect(() => {
    const element = audio.current;
    if (!element) return;
    let frame = 0;
    const follow = () => {
      setCurrent(words[wordAt(words, element.currentTime)]?.index ?? -1);
      if (!element.paused && !element.ended) frame = requestAnimationFrame(follow);
    };
    const start = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(follow);
    };
    element.addEventListener("play", start);
    element.addEventListener("seeked", follow);
    element.addEventListener("timeupdate", follow);
    return () => {
      cancelAnimationFrame(frame);
      element.removeEventListener("play", start);
      element.removeEventListener("seeked", follow);
      element.removeEventListener("timeupdate", follow);
    };
  }, [words, call?.recording_url]);

  if (!call) return html`<section><h1>Call</h1><${ErrorNote} error=${error} /><p>Loading…</p></section>`;
  const seek = (seconds: number) => {
    if (audio.current) audio.current.currentTime = seconds;
  };
  let offset = 0;
  return html`
    <section aria-labelledby="call-title" class="call">
      <h1 id="call-title"><${Label} kind="call_type" value=${call.call_type} />${call.direction ? html` · <${Label} kind="direction" value=${call.direction} />` : null} <small class="hint" title=${call.id}>${formatDate(call.created_at)}</small></h1>
      <${ErrorNote} error=${error} />
      <dl class="facts">
        <div><dt>Status</dt><dd><${StatusPill} status=${call.status} testId="call-status" /></dd></div>
        <div><dt>Type</dt><dd><${Label} kind="call_type" value=${call.call_type} />${call.direction ? html` · <${Label} kind="direction" value=${call.direction} />` : null}</dd></div>
        <div><dt>Thread</dt><dd><${Link} href=${`/threads/${call.thread_id}`} title=${call.thread_id}>Open the thread<//></dd></div>
        ${call.call_type === "phone_call"
          ? html`<div><dt>From</dt><dd>${call.from_number ?? html`<${Unknown} />`}</dd></div><div><dt>To</dt><dd>${call.to_number ?? html`<${Unknown} />`}</dd></div>`
          : null}
        ${call.scheduled_for ? html`<div><dt>Scheduled for</dt><dd><${When} iso=${call.scheduled_for} /></dd></div>` : null}
        <div><dt>Started</dt><dd><${When} iso=${call.start_timestamp === null ? null : new Date(call.start_timestamp * 1000).toISOString()} /></dd></div>
        <div><dt>Duration</dt><dd><${CallDuration} milliseconds=${call.duration_ms} /></dd></div>
        <div><dt>Ended because</dt><dd data-testid="disconnection-reason"><${Label} kind="disconnection_reason" value=${call.disconnection_reason} /></dd></div>
        <div><dt>Call id</dt><dd><code>${call.id}</code></dd></div>
      </dl>
      <h2>Recording</h2>
      ${call.recording_url
        ? html`<audio ref=${audio} controls preload="auto" src=${call.recording_url} aria-label="Call recording" onError=${retryRecording}></audio>`
        : html`<p>No recording yet.</p>`}
      ${toolTurns.length > 0
        ? html`<h2>Tool calls</h2>
            <ol class="transcript" aria-label="The agent's turns that called tools">
              ${toolTurns.map((turn) => html`<li key=${turn.id} class="utterance agent"><span class="speaker">Agent</span><span>${turn.text}<${ToolCalls} calls=${turn.calls} /></span></li>`)}
            </ol>`
        : null}
      <h2>Transcript</h2>
      ${call.transcript_object
        ? html`<ol class="transcript" aria-label="Transcript; the word being played is highlighted">
            ${call.transcript_object.map((utterance, index) => {
              const first = offset;
              offset += utterance.words.length;
              const start = utterance.words[0]?.start;
              return html`<li key=${index} class=${`utterance ${utterance.role}`}>
                <span class="speaker">
                  ${utterance.role === "agent" ? "Agent" : "User"}
                  ${start === undefined
                    ? null
                    : html`<button type="button" class="link turn-time" onClick=${() => seek(start)} aria-label=${`Play from ${clock(start)}`}><time datetime=${`PT${start.toFixed(2)}S`}>${clock(start)}</time></button>`}
                </span>
                <span class="words">
                  ${utterance.words.length === 0
                    ? utterance.content
                    : writtenTokens(utterance).map(({ text, word }, position) => {
                        if (word === null) return html`<span key=${`t${position}`}>${text}</span> `;
                        const timed = utterance.words[word]!;
                        const lit = current === first + word;
                        return html`<span key=${first + word} class=${lit ? "word current" : "word"} aria-current=${lit ? "true" : undefined} data-start=${timed.start} onClick=${() => seek(timed.start)}>${text}</span> `;
                      })}
                </span>
              </li>`;
            })}
          </ol>`
        : call.transcript
          ? html`<pre class="transcript-text">${call.transcript}</pre>`
          : html`<p>No transcript yet.</p>`}
      <h2>Analysis</h2>
      ${call.call_analysis
        ? html`<dl class="facts">
            <div><dt>Summary</dt><dd>${call.call_analysis.call_summary}</dd></div>
            <div><dt>Sentiment</dt><dd>${call.call_analysis.user_sentiment}</dd></div>
            <div><dt>Successful</dt><dd>${call.call_analysis.call_successful === null ? html`<${Unknown} />` : call.call_analysis.call_successful ? "Yes" : "No"}</dd></div>
            ${Object.entries(call.call_analysis.custom_analysis_data).map(([key, value]) => html`<div key=${key}><dt>${key}</dt><dd>${value === null ? html`<${Unknown} />` : JSON.stringify(value)}</dd></div>`)}
          </dl>`
        : html`<p>${call.status === "ended" ? "Analysis pending…" : "Available after the call ends."}</p>`}
    </section>
  `;
}
