import { CAPTURE_WORKLET, openCallAudio, Playback } from "./widget-audio.js";

/**
 * Parley's browser widget: one script tag, then `Parley.mount({...})`. It opens a chat (streamed replies) and a voice
 * call (microphone up, the agent's speech down, barge-in, live transcript) for one thread. It never holds an API
 * key: the embedding page's `getToken` callback fetches a thread token from the site's own backend, and is called
 * again before the token expires.
 */
export interface MountOptions {
  element: HTMLElement;
  threadId: string;
  /** The project's name, for chat (`service_config_name`). */
  projectName: string;
  /** The project's id, for voice calls. */
  projectId?: string;
  /** Returns a thread token (`POST /threads/{id}/token`, made by the site's backend with its API key). */
  getToken(): Promise<string>;
  /** Parley's address; by default the origin this script was loaded from. */
  baseUrl?: string;
}

export interface WidgetHandle {
  /** Bytes of agent speech received so far, and the call's id once a call started. */
  stats(): { audioBytes: number; sentBytes: number; peak: number; callId: string | undefined; transcript: string[] };
  hangUp(): void;
}

const scriptOrigin = (() => {
  const current = document.currentScript;
  return current instanceof HTMLScriptElement && current.src ? new URL(current.src).origin : location.origin;
})();

function expiresAt(token: string): number {
  try {
    const payload = JSON.parse(atob((token.split(".")[1] ?? "").replace(/-/g, "+").replace(/_/g, "/"))) as { exp?: unknown };
    return typeof payload.exp === "number" ? payload.exp * 1000 : 0;
  } catch {
    return 0;
  }
}

/** Drawn, not an emoji: a page's visitor may have no emoji font (the button would show an empty box). */
function microphoneIcon(): SVGSVGElement {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("class", "parley-icon");
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", "M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11z");
  path.setAttribute("fill", "currentColor");
  svg.append(path);
  return svg;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

const STYLE = `
.parley{font:14px system-ui,sans-serif;border:1px solid #ccd;border-radius:10px;width:340px;display:flex;flex-direction:column;overflow:hidden;background:#fff}
.parley-log{height:260px;overflow:auto;padding:10px;display:flex;flex-direction:column;gap:6px}
.parley-msg{padding:6px 9px;border-radius:8px;max-width:85%;white-space:pre-wrap}
.parley-user{align-self:flex-end;background:#2d6cdf;color:#fff}
.parley-agent{align-self:flex-start;background:#eef}
.parley-status{font-size:12px;color:#667;padding:0 10px}
.parley-bar{display:flex;border-top:1px solid #ccd}
.parley-bar input{flex:1;min-width:0;border:0;padding:10px;font:inherit}
.parley-bar button{border:0;background:#2d6cdf;color:#fff;padding:0 12px;font:inherit;cursor:pointer;white-space:nowrap}
.parley-bar button+button{border-left:1px solid rgba(255,255,255,.45)}
.parley-bar button.parley-live{background:#d33}
.parley-icon{width:1.1em;height:1.1em;vertical-align:-0.2em;margin-right:4px}
`;

export function mount(options: MountOptions): WidgetHandle {
  const base = (options.baseUrl ?? scriptOrigin).replace(/\/+$/, "");
  const wsBase = base.replace(/^http/, "ws");
  let token: string | undefined;
  let tokenRequest: Promise<string> | undefined;

  /** A token with a minute left at least; requests that need a new one at the same time share one `getToken` call. */
  function freshToken(): Promise<string> {
    if (token && expiresAt(token) - Date.now() >= 60_000) return Promise.resolve(token);
    tokenRequest ??= options
      .getToken()
      .then((fresh) => (token = fresh))
      .finally(() => (tokenRequest = undefined));
    return tokenRequest;
  }

  if (!document.getElementById("parley-style")) {
    const style = el("style", "");
    style.id = "parley-style";
    style.textContent = STYLE;
    document.head.append(style);
  }
  const root = el("div", "parley");
  const log = el("div", "parley-log");
  log.setAttribute("role", "log");
  log.setAttribute("aria-label", "Conversation");
  const status = el("div", "parley-status", "Ready");
  const bar = el("div", "parley-bar");
  const input = el("input", "");
  input.placeholder = "Type a message…";
  input.setAttribute("aria-label", "Message");
  const send = el("button", "parley-send", "Send");
  const talk = el("button", "parley-talk");
  function showTalk(): void {
    talk.classList.remove("parley-live");
    talk.replaceChildren(microphoneIcon(), "Talk");
  }
  showTalk();
  bar.append(input, send, talk);
  root.append(log, status, bar);
  options.element.append(root);

  const transcript: string[] = [];
  function line(role: "user" | "agent", text: string): HTMLElement {
    const node = el("div", `parley-msg parley-${role}`, text);
    log.append(node);
    log.scrollTop = log.scrollHeight;
    return node;
  }

  async function chat(text: string): Promise<void> {
    line("user", text);
    const reply = line("agent", "…");
    const request = (credential: string) =>
      fetch(`${base}/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${credential}`, "content-type": "application/json", accept: "application/x-ndjson" },
        body: JSON.stringify({ thread_id: options.threadId, message: text, service_config_name: options.projectName, streaming: true }),
      });
    const sent = await freshToken();
    let response = await request(sent);
    if (response.status === 401) {
      // Refused though it looked valid (the page's clock is off, or Parley's secret changed): once more with a new
      // token, unless another request has already got one.
      if (token === sent) token = undefined;
      response = await request(await freshToken());
    }
    if (!response.ok || !response.body) {
      reply.textContent = `Error ${response.status}`;
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = "";
    let shown = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const raw of lines) {
        if (raw.trim() === "") continue;
        const item = JSON.parse(raw) as { token?: string; message?: string; error?: string };
        if (item.token !== undefined) shown += item.token;
        else if (item.message !== undefined) shown = item.message;
        else if (item.error !== undefined) shown = `Error: ${item.error}`;
        reply.textContent = shown;
      }
    }
  }

  send.onclick = () => {
    const text = input.value.trim();
    if (text === "") return;
    input.value = "";
    void chat(text).catch((error: unknown) => (status.textContent = `Chat failed: ${String(error)}`));
  };
  input.onkeydown = (event) => {
    if (event.key === "Enter") send.click();
  };

  let call: { socket: WebSocket; stop(): void; id: string } | undefined;
  let callId: string | undefined;
  let playback: Playback | undefined;
  let sentBytes = 0;
  let peak = 0;

  async function startCall(): Promise<void> {
    if (!options.projectId) throw new Error("voice needs projectId");
    status.textContent = "Connecting…";
    // Made at the click: browsers start audio only from a user's gesture.
    const context = new AudioContext();
    await context.resume();
    const moduleUrl = URL.createObjectURL(new Blob([CAPTURE_WORKLET], { type: "application/javascript" }));
    await context.audioWorklet.addModule(moduleUrl);
    URL.revokeObjectURL(moduleUrl);
    const events = new WebSocket(`${wsBase}/threads/${encodeURIComponent(options.threadId)}/events?token=${encodeURIComponent(await freshToken())}`);
    const ready = new Promise<{ call_id: string; access_token: string }>((resolve, reject) => {
      events.onmessage = (message) => {
        const event = JSON.parse(String(message.data)) as { type: string; call_id?: string; access_token?: string };
        if (event.type === "web_call.ready" && event.call_id && event.access_token) resolve({ call_id: event.call_id, access_token: event.access_token });
      };
      events.onerror = () => reject(new Error("the events socket failed"));
    });
    await new Promise((resolve, reject) => {
      events.onopen = resolve;
      events.onclose = reject;
    });
    const created = await fetch(`${base}/voice/${encodeURIComponent(options.threadId)}/web-call`, {
      method: "POST",
      headers: { authorization: `Bearer ${await freshToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ project_id: options.projectId }),
    });
    if (!created.ok) throw new Error(`web call refused: ${created.status}`);
    const { call_id: id, access_token: access } = await ready;
    events.close();
    callId = id;
    const { socket, microphone, source, capture } = await openCallAudio(context, `${wsBase}/calls/${encodeURIComponent(id)}/ws?token=${encodeURIComponent(access)}`);
    playback = new Playback(context);
    let agentLine: HTMLElement | undefined;
    capture.port.onmessage = (message: MessageEvent<ArrayBuffer>) => {
      if (socket.readyState !== WebSocket.OPEN) return;
      sentBytes += message.data.byteLength;
      peak = 0;
      for (const sample of new Int16Array(message.data)) peak = Math.max(peak, Math.abs(sample));
      socket.send(message.data);
    };
    socket.onmessage = (message) => {
      if (message.data instanceof ArrayBuffer) {
        playback?.enqueue(message.data);
        return;
      }
      const frame = JSON.parse(String(message.data)) as { type: string; role?: "user" | "agent"; text?: string; final?: boolean; reason?: string; detail?: string };
      if (frame.type === "call.started") status.textContent = "Listening…";
      else if (frame.type === "agent_speaking") status.textContent = "Agent speaking…";
      else if (frame.type === "clear") playback?.clear();
      else if (frame.type === "transcript" && frame.role && frame.text !== undefined) {
        if (frame.role === "user") {
          line("user", frame.text);
          transcript.push(`User: ${frame.text}`);
        } else if (frame.final) {
          (agentLine ?? line("agent", "")).textContent = frame.text;
          transcript.push(`Agent: ${frame.text}`);
          agentLine = undefined;
          status.textContent = "Listening…";
        } else {
          agentLine ??= line("agent", "");
          agentLine.textContent = (agentLine.textContent ?? "") + frame.text;
        }
      } else if (frame.type === "error") status.textContent = `Error: ${frame.detail ?? ""}`;
      else if (frame.type === "end" || frame.type === "call.ended") status.textContent = `Call ended (${frame.reason ?? ""})`;
    };
    // The socket's close and a click on Hang up both stop the call: it stops once (a second AudioContext.close throws).
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      source.disconnect();
      capture.disconnect();
      for (const track of microphone.getTracks()) track.stop();
      playback?.clear();
      void context.close();
      showTalk();
      call = undefined;
    };
    socket.onclose = stop;
    call = { socket, stop, id };
    talk.classList.add("parley-live");
    talk.textContent = "■ Hang up";
  }

  function hangUp(): void {
    if (!call) return;
    if (call.socket.readyState === WebSocket.OPEN) call.socket.send(JSON.stringify({ type: "hangup" }));
    call.stop();
  }

  talk.onclick = () => {
    if (call) hangUp();
    else void startCall().catch((error: unknown) => (status.textContent = `Call failed: ${error instanceof Error ? error.message : String(error)}`));
  };

  return {
    stats: () => ({ audioBytes: playback?.bytesReceived ?? 0, sentBytes, peak, callId, transcript: [...transcript] }),
    hangUp,
  };
}
