import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pino from "pino";
import { StreamResampler } from "../../../../src/providers/speech/audio.js";
import { decodeMuLaw, encodeMuLaw } from "../../../../src/providers/speech/mulaw.js";
import { concatSamples } from "../../../support/speech-audio.js";
import type { AudioTransport } from "../../../../src/providers/speech/pipeline/transport.js";
import { TwilioMediaSession, type TwilioMediaCall } from "../../../../src/providers/voice/twilio/twilio-media-session.js";

interface Harness {
  session: TwilioMediaSession;
  sent: Record<string, unknown>[];
  closed: { code: number; reason: string }[];
  transport: () => AudioTransport | undefined;
  hungUp: () => number;
  heard: Int16Array[];
}

function harness(options: { acceptToken?: string; speech?: boolean } = {}): Harness {
  const sent: Record<string, unknown>[] = [];
  const closed: { code: number; reason: string }[] = [];
  const heard: Int16Array[] = [];
  let attached: AudioTransport | undefined;
  let hangUps = 0;
  const call: TwilioMediaCall = {
    callId: "call-1",
    hungUp: async () => {
      hangUps += 1;
    },
    attach: async (transport) => {
      attached = transport;
      // The pipeline takes a moment to start; audio that arrives meanwhile must not be lost.
      await new Promise((resolve) => setTimeout(resolve, 20));
      return options.speech === false ? undefined : { hear: (samples) => heard.push(samples) };
    },
    log: pino({ level: "silent" }),
  };
  const session = new TwilioMediaSession(
    "call-1",
    { begin: async (_callId, token) => (token === (options.acceptToken ?? "right") ? call : undefined) },
    { send: (text) => sent.push(JSON.parse(text) as Record<string, unknown>), close: (code, reason) => closed.push({ code, reason }) },
  );
  return { session, sent, closed, transport: () => attached, hungUp: () => hangUps, heard };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 60));

function start(session: TwilioMediaSession, token: string): void {
  session.receive(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
  session.receive(JSON.stringify({ event: "start", streamSid: "MZ1", start: { streamSid: "MZ1", callSid: "CA1", customParameters: { token } } }));
}

function media(session: TwilioMediaSession, samples: Int16Array, timestamp: number): void {
  session.receive(JSON.stringify({ event: "media", streamSid: "MZ1", media: { track: "inbound", timestamp: String(timestamp), payload: Buffer.from(encodeMuLaw(samples)).toString("base64") } }));
}

const tone = (samples: number, rate: number, hz = 440, amplitude = 8000) => Int16Array.from({ length: samples }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate)));

/** `samples` pushed through `resampler` in frames of `frameSize`, as a stream delivers them. */
function streamThrough(resampler: StreamResampler, samples: Int16Array, frameSize: number): Int16Array {
  const frames: Int16Array[] = [];
  for (let offset = 0; offset < samples.length; offset += frameSize) frames.push(resampler.push(samples.subarray(offset, offset + frameSize)));
  return concatSamples(...frames);
}

/** The largest jump between neighbouring samples: a click where frames were joined badly. */
function largestStep(samples: Int16Array): number {
  let largest = 0;
  for (let i = 1; i < samples.length; i++) largest = Math.max(largest, Math.abs(samples[i]! - samples[i - 1]!));
  return largest;
}

describe("the Twilio media stream transport", () => {
  test("a stream resampled frame by frame follows the signal across frame edges, keeps its length, and keeps 4–8 kHz out", () => {
    // How far a resampled 300 Hz tone strays from the ideal one, delayed as the filter delays it (in output samples).
    const stray = (out: Int16Array, rate: number, delay: number) => {
      let largest = 0;
      for (let n = 20; n < out.length; n++) largest = Math.max(largest, Math.abs(out[n]! - 8000 * Math.sin((2 * Math.PI * 300 * (n - delay)) / rate)));
      return largest;
    };
    const out = streamThrough(new StreamResampler(16_000, 8000), tone(16_000, 16_000, 300), 320);
    assert.equal(out.length, 8000);
    // Resampling each 20 ms frame on its own strays by ~190 at every frame edge; carried across frames, by rounding.
    assert.ok(stray(out, 8000, 7.5) < 60, `16 → 8 kHz strays by ${stray(out, 8000, 7.5).toFixed(0)}`);
    const back = streamThrough(new StreamResampler(8000, 16_000), tone(8000, 8000, 300), 160);
    assert.equal(back.length, 16_000);
    assert.ok(stray(back, 16_000, 1) < 120, `8 → 16 kHz strays by ${stray(back, 16_000, 1).toFixed(0)} (per frame: ~930)`);
    // Above the telephone band, nothing passes: a 6 kHz tone does not fold back into the 8 kHz stream (plain
    // decimation folds it to 2 kHz at full level).
    const folded = streamThrough(new StreamResampler(16_000, 8000), tone(16_000, 16_000, 6000), 320);
    assert.ok(largestStep(folded.subarray(100)) < 400, `6 kHz leaks through: ${largestStep(folded)}`);
  });

  test("declares its callers telephone-band to the pipeline it attaches to, so the recognizer maps their cepstra", async () => {
    const h = harness();
    start(h.session, "right");
    await settle();
    assert.equal(h.transport()?.callerChannel, "telephone");
  });

  test("nothing is taken before an authenticated start; a wrong token closes the stream with 4403", async () => {
    const h = harness();
    media(h.session, tone(160, 8000), 0);
    start(h.session, "wrong");
    await settle();
    assert.deepEqual(h.closed, [{ code: 4403, reason: "stream not authorized" }]);
    assert.equal(h.transport(), undefined);
    assert.deepEqual(h.heard, []);
  });

  test("the caller's audio reaches the pipeline at 16 kHz, including what arrived while it started", async () => {
    const h = harness();
    start(h.session, "right");
    media(h.session, tone(160, 8000), 0);
    media(h.session, tone(160, 8000), 20);
    await settle();
    media(h.session, tone(160, 8000), 40);
    assert.deepEqual(
      h.heard.map((frame) => frame.length),
      [320, 320, 320],
    );
  });

  test("the agent's 16 kHz frames go out as 20 ms μ-law payloads; marks and clear are sent as Twilio expects", async () => {
    const h = harness();
    start(h.session, "right");
    await settle();
    const transport = h.transport()!;
    const agent = tone(3200, 16_000);
    for (let offset = 0; offset < agent.length; offset += 320) transport.play(agent.subarray(offset, offset + 320));
    transport.mark("sentence-0");
    transport.clear();
    const payloads = h.sent.filter((frame) => frame["event"] === "media").map((frame) => Buffer.from((frame["media"] as { payload: string }).payload, "base64"));
    assert.deepEqual(
      payloads.map((payload) => payload.length),
      Array(10).fill(160),
    );
    const played = decodeMuLaw(Buffer.concat(payloads));
    const peak = played.reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
    assert.ok(peak > 6000 && peak < 9000, `the tone's level survives the trip (peak ${peak})`);
    assert.deepEqual(h.sent.slice(-2), [
      { event: "mark", streamSid: "MZ1", mark: { name: "sentence-0" } },
      { event: "clear", streamSid: "MZ1" },
    ]);
  });

  test("stop from Twilio reports the caller's hang-up once; Parley closing the stream does not", async () => {
    const caller = harness();
    start(caller.session, "right");
    await settle();
    caller.session.receive(JSON.stringify({ event: "stop", streamSid: "MZ1", stop: { callSid: "CA1" } }));
    caller.session.socketClosed();
    await settle();
    assert.equal(caller.hungUp(), 1);

    const parley = harness();
    start(parley.session, "right");
    await settle();
    parley.session.close(1000, "call ended");
    parley.session.socketClosed();
    await settle();
    assert.deepEqual(parley.closed, [{ code: 1000, reason: "call ended" }]);
    assert.equal(parley.hungUp(), 0);
    parley.transport()!.play(new Int16Array(320));
    assert.equal(parley.sent.length, 0, "nothing is sent on a closed stream");
  });

  test("a call whose speech cannot start takes no audio", async () => {
    const h = harness({ speech: false });
    start(h.session, "right");
    media(h.session, tone(160, 8000), 0);
    await settle();
    media(h.session, tone(160, 8000), 20);
    assert.deepEqual(h.heard, []);
  });
});
