import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { isEvent } from "../../../packages/client/src/index.js";
import { openCallAudio, Playback } from "../widget-audio.js";
import { labelOf } from "./labels.js";
import { apiClient } from "./session.js";
import { ErrorNote } from "./ui.js";

interface Line {
  role: "user" | "agent";
  text: string;
  final: boolean;
}

/** A frame of the call WebSocket's JSON side (decisions.md, "Web calls with audio"). */
interface ControlFrame {
  type: string;
  role?: "user" | "agent";
  text?: string;
  final?: boolean;
  reason?: string;
  detail?: string;
}

/** A transcript frame added to the lines: the agent's partial text grows its open line until the final one. */
function withFrame(lines: Line[], frame: Required<Pick<ControlFrame, "role" | "text">> & { final: boolean }): Line[] {
  const last = lines.at(-1);
  if (frame.role === "agent" && last && last.role === "agent" && !last.final) {
    return [...lines.slice(0, -1), { role: "agent", text: frame.final ? frame.text : last.text + frame.text, final: frame.final }];
  }
  return [...lines, { role: frame.role, text: frame.text, final: frame.final || frame.role === "user" }];
}

/**
 * A web call to the project's agent with this browser's microphone, as the widget makes one: a new thread of the
 * signed-in organization, the web call asked for, the call WebSocket joined with the token `web_call.ready` brings,
 * the microphone sent as 16 kHz PCM (the widget's AudioWorklet, served from /console so that the page's script policy
 * stays 'self'), the agent's audio played, and the live transcript shown as it comes.
 */
export function TestCall({ projectId, projectName }: { projectId: string; projectName: string }) {
  const [state, setState] = useState<"idle" | "connecting" | "live" | "ended">("idle");
  const [status, setStatus] = useState("");
  const [lines, setLines] = useState<Line[]>([]);
  const [callId, setCallId] = useState<string>();
  const [error, setError] = useState<unknown>();
  const hangUp = useRef<() => void>();
  useEffect(() => () => hangUp.current?.(), []);

  const start = async () => {
    setError(undefined);
    setLines([]);
    setCallId(undefined);
    setState("connecting");
    setStatus("Connecting…");
    // Made at the click: browsers start audio only from a user's gesture.
    const context = new AudioContext();
    const cleanups: (() => void)[] = [() => void context.close()];
    const stop = () => {
      for (const cleanup of cleanups.splice(0)) cleanup();
      hangUp.current = undefined;
      setState("ended");
    };
    try {
      await context.resume();
      await context.audioWorklet.addModule("/console/capture-worklet.js");
      const client = apiClient();
      const { thread_id: threadId } = await client.threads.create({ project_name: projectName });
      const events = client.events(threadId);
      cleanups.push(() => events.close());
      await events.opened;
      await client.voice.webCall(threadId, { project_id: projectId });
      let ready: { call_id: string; access_token: string } | undefined;
      for await (const event of events) {
        if (isEvent(event, "web_call.ready")) {
          ready = event;
          break;
        }
      }
      if (!ready) throw new Error("the events socket closed before the call was ready");
      setCallId(ready.call_id);
      const url = `${location.origin.replace(/^http/, "ws")}/calls/${encodeURIComponent(ready.call_id)}/ws?token=${encodeURIComponent(ready.access_token)}`;
      const { socket, microphone, source, capture } = await openCallAudio(context, url);
      cleanups.unshift(() => socket.close());
      const playback = new Playback(context);
      cleanups.unshift(() => {
        source.disconnect();
        capture.disconnect();
        for (const track of microphone.getTracks()) track.stop();
        playback.clear();
      });
      capture.port.onmessage = (message: MessageEvent<ArrayBuffer>) => {
        if (socket.readyState === WebSocket.OPEN) socket.send(message.data);
      };
      socket.onmessage = (message) => {
        if (message.data instanceof ArrayBuffer) return playback.enqueue(message.data);
        const frame = JSON.parse(String(message.data)) as ControlFrame;
        if (frame.type === "call.started") setStatus("Listening…");
        else if (frame.type === "agent_speaking") setStatus("Agent speaking…");
        else if (frame.type === "clear") playback.clear();
        else if (frame.type === "transcript" && frame.role && frame.text !== undefined) {
          const { role, text } = frame;
          setLines((current) => withFrame(current, { role, text, final: frame.final === true }));
          if (role === "agent" && frame.final) setStatus("Listening…");
        } else if (frame.type === "error") setStatus(`Error: ${frame.detail ?? ""}`);
        else if (frame.type === "end" || frame.type === "call.ended") setStatus(`Call ended${frame.reason ? `: ${labelOf("disconnection_reason", frame.reason)}` : ""}`);
      };
      socket.onclose = stop;
      hangUp.current = () => {
        if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "hangup" }));
        stop();
      };
      setState("live");
      setStatus("Listening…");
    } catch (failure) {
      setError(failure);
      setStatus("");
      stop();
    }
  };

  return html`<section class="test-call" aria-labelledby="test-call-title">
    <h4 id="test-call-title">Test call</h4>
    <p class="hint">A web call to this project's agent with your microphone, in a new thread of the organization you signed in with.</p>
    <div class="form-actions">
      ${state === "live" || state === "connecting"
        ? html`<button type="button" class="danger" onClick=${() => hangUp.current?.()} disabled=${state === "connecting"}>Hang up</button>`
        : html`<button type="button" onClick=${() => void start()}>Start test call</button>`}
      <span class="live-status" aria-live="polite" data-testid="test-call-status">${status}</span>
      ${callId ? html`<${Link} href=${`/calls/${callId}`}>Open the call<//>` : null}
    </div>
    <${ErrorNote} error=${error} />
    ${lines.length
      ? html`<ol class="messages live-transcript" aria-label="Live transcript" aria-live="polite">
          ${lines.map((line, index) => html`<li key=${index} class=${`message ${line.role === "agent" ? "assistant" : "user"}`}><span class="meta">${line.role === "agent" ? "Agent" : "You"}</span><span class="text">${line.text}</span></li>`)}
        </ol>`
      : null}
  </section>`;
}
