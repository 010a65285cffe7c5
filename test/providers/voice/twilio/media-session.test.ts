import assert from "node:assert/strict";
import { describe, test } from "node:test";
import pino from "pino";
import type { CallAudioTransport } from "../../../../src/providers/voice/call-audio.js";
import { decodeMulaw, encodeMulaw } from "../../../../src/providers/voice/twilio/mulaw.js";
import { TwilioMediaSession, type TwilioMediaCall } from "../../../../src/providers/voice/twilio/twilio-media-session.js";
import { decodeWav } from "../../../../src/providers/voice/wav.js";

interface Harness {
  session: TwilioMediaSession;
  sent: Record<string, unknown>[];
  closed: { code: number; reason: string }[];
  transport: () => CallAudioTransport | undefined;
  recordings: Buffer[];
  hungUp: () => number;
  heard: Int16Array[];
}

function harness(acceptToken = "right"): Harness {
  const sent: Record<string, unknown>[] = [];
  const closed: { code: number; reason: string }[] = [];
  const recordings: Buffer[] = [];
  const heard: Int16Array[] = [];
  let attached: CallAudioTransport | undefined;
  let hangUps = 0;
  const call: TwilioMediaCall = {
    callId: "call-1",
    hungUp: async () => {
      hangUps += 1;
    },
    saveRecording: async (wav) => {
      recordings.push(wav);
    },
    attach: (transport) => {
      attached = transport;
      transport.onAudio((samples) => heard.push(samples));
    },
    release: () => undefined,
    log: pino({ level: "silent" }),
  };
  const session = new TwilioMediaSession(
    "call-1",
    { begin: async (_callId, token) => (token === acceptToken ? call : undefined) },
    { send: (text) => sent.push(JSON.parse(text) as Record<string, unknown>), close: (code, reason) => closed.push({ code, reason }) },
  );
  return { session, sent, closed, transport: () => attached, recordings, hungUp: () => hangUps, heard };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 10));

function start(session: TwilioMediaSession, token: string): void {
  session.receive(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
  session.receive(JSON.stringify({ event: "start", streamSid: "MZ1", start: { streamSid: "MZ1", callSid: "CA1", customParameters: { token } } }));
}

const tone = (samples: number, amplitude = 8000) => Int16Array.from({ length: samples }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000)));

describe("the Twilio media stream transport", () => {
  test("μ-law round-trips within the codec's step and maps the reference bytes", () => {
    assert.deepEqual(Array.from(decodeMulaw(new Uint8Array([0xff, 0x7f, 0x00, 0x80]))), [0, 0, -32124, 32124]);
    const samples = tone(800, 20000);
    const back = decodeMulaw(encodeMulaw(samples));
    for (let i = 0; i < samples.length; i++) assert.ok(Math.abs(back[i]! - samples[i]!) <= Math.max(8, Math.abs(samples[i]!) / 16));
  });

  test("nothing is taken before an authenticated start; a wrong token closes the stream with 4403", async () => {
    const h = harness();
    h.session.receive(JSON.stringify({ event: "media", media: { payload: Buffer.from(encodeMulaw(tone(160))).toString("base64"), timestamp: "0" } }));
    start(h.session, "wrong");
    await tick();
    assert.deepEqual(h.closed, [{ code: 4403, reason: "stream not authorized" }]);
    assert.equal(h.transport(), undefined);
    assert.deepEqual(h.heard, []);
  });

  test("the caller's audio comes out as PCM; the agent's goes out in 20 ms μ-law frames with a mark, played when Twilio echoes it", async () => {
    const h = harness();
    start(h.session, "right");
    await tick();
    const transport = h.transport();
    assert.ok(transport);
    h.session.receive(JSON.stringify({ event: "media", streamSid: "MZ1", media: { track: "inbound", timestamp: "0", payload: Buffer.from(encodeMulaw(tone(160))).toString("base64") } }));
    assert.equal(h.heard.length, 1);
    assert.equal(h.heard[0]?.length, 160);

    const played = transport.play(tone(400));
    const media = h.sent.filter((frame) => frame["event"] === "media");
    assert.deepEqual(media.map((frame) => Buffer.from((frame["media"] as { payload: string }).payload, "base64").length), [160, 160, 80]);
    assert.ok(media.every((frame) => frame["streamSid"] === "MZ1"));
    const mark = h.sent.at(-1) as { event: string; mark: { name: string } };
    assert.equal(mark.event, "mark");
    h.session.receive(JSON.stringify({ event: "mark", streamSid: "MZ1", mark: { name: mark.mark.name } }));
    assert.equal(await played, true);
  });

  test("clear drops what is queued: Twilio is told to clear, pending clips count as not played, the recording stops there", async () => {
    const h = harness();
    start(h.session, "right");
    await tick();
    const transport = h.transport()!;
    const long = transport.play(tone(8000 * 5));
    await new Promise((resolve) => setTimeout(resolve, 200));
    transport.clear();
    assert.equal(h.sent.at(-1)?.["event"], "clear");
    assert.equal(await long, false);
    h.session.receive(JSON.stringify({ event: "stop", streamSid: "MZ1", stop: { callSid: "CA1" } }));
    await tick();
    assert.equal(h.hungUp(), 1);
    const recording = decodeWav(h.recordings[0]!);
    assert.equal(recording.sampleRate, 8000);
    assert.ok(recording.samples.length < 8000, `only the part played before the clear is recorded (${recording.samples.length} samples)`);
    assert.ok(recording.samples.length >= 1200);
  });

  test("Parley closing the stream keeps the recording and does not report a caller hang-up", async () => {
    const h = harness();
    start(h.session, "right");
    await tick();
    h.session.receive(JSON.stringify({ event: "media", streamSid: "MZ1", media: { track: "inbound", timestamp: "40", payload: Buffer.from(encodeMulaw(tone(160))).toString("base64") } }));
    h.session.close(1000, "call ended");
    await tick();
    assert.deepEqual(h.closed, [{ code: 1000, reason: "call ended" }]);
    assert.equal(h.hungUp(), 0);
    assert.equal(decodeWav(h.recordings[0]!).samples.length, 320 + 160, "the caller's audio sits at Twilio's timestamp");
  });
});
