import type { TimedUtterance } from "../../../domain/calls/ports.js";
import { encodeWav, mixInto, PIPELINE_SAMPLE_RATE } from "../audio.js";
import { alignWords, speechTokens } from "../word-timing.js";

interface Placed {
  role: "agent" | "user";
  content: string;
  /** The utterance's audio and where it starts in the recording, for its word timings. */
  audio: Int16Array;
  offset: number;
}

/**
 * Records both sides of a call on one 16 kHz timeline that starts when the call connected: the caller's audio as its
 * stream runs, the agent's where it was played on that clock, overlapping when they talked at once (a barge-in),
 * mixed when the recording is taken. The call's end is the recording's end, so `duration_ms` is its length.
 */
export class CallRecorder {
  private caller: Int16Array = new Int16Array(PIPELINE_SAMPLE_RATE * 10);
  private agent: Int16Array = new Int16Array(PIPELINE_SAMPLE_RATE * 10);
  private callerCursor = 0;
  private agentCursor = 0;
  private callerStarted = false;
  private readonly utterances: Placed[] = [];

  constructor(private readonly now: () => number = Date.now, private readonly startedAt: number = now()) {}

  /** The current position on the timeline, in samples. */
  position(): number {
    return Math.max(0, Math.round(((this.now() - this.startedAt) * PIPELINE_SAMPLE_RATE) / 1000));
  }

  /**
   * A frame of the caller's audio. The caller's stream is the recording's clock: frames follow each other, also when
   * they arrive in bursts (a busy event loop, network jitter). The stream's first frame is placed at the wall clock,
   * and a silence of more than a second in delivery (a stalled connection) is kept as a gap.
   */
  callerFrame(frame: Int16Array): number {
    const clock = this.position() - frame.length;
    if (!this.callerStarted || clock - this.callerCursor > PIPELINE_SAMPLE_RATE) this.callerCursor = Math.max(this.callerCursor, clock);
    this.callerStarted = true;
    const offset = this.callerCursor;
    this.caller = place(this.caller, frame, offset);
    this.callerCursor += frame.length;
    return offset;
  }

  /** A frame of the agent's speech, played now on the caller's clock (or right after the previous one). */
  agentFrame(frame: Int16Array): number {
    const offset = Math.max(this.agentCursor, this.callerStarted ? this.callerCursor : this.position());
    this.agent = place(this.agent, frame, offset);
    this.agentCursor = offset + frame.length;
    return offset;
  }

  /** An utterance for the transcript: what was said, its audio and where that audio starts on the timeline. */
  utterance(role: "agent" | "user", content: string, audio: Int16Array, offset: number): void {
    if (content.trim() !== "") this.utterances.push({ role, content, audio, offset });
  }

  /** The recording up to now (a mono 16-bit WAV) and the transcript with word timings in seconds from its start. */
  finish(): { wav: Buffer; durationMs: number; endedAt: Date; transcriptObject: TimedUtterance[] } {
    const length = Math.max(this.position(), this.callerCursor, this.agentCursor);
    const track = new Int16Array(length);
    track.set(this.caller.subarray(0, Math.min(length, this.callerCursor)));
    mixInto(track, this.agent.subarray(0, Math.min(length, this.agentCursor)), 0);
    const lastMs = Math.floor((length * 1000) / PIPELINE_SAMPLE_RATE) / 1000;
    const seconds = (offset: number, within: number) => Math.min(lastMs, Math.round((offset / PIPELINE_SAMPLE_RATE + within) * 1000) / 1000);
    const transcriptObject = [...this.utterances]
      .sort((a, b) => a.offset - b.offset)
      .map((utterance) => {
        const tokens = speechTokens(utterance.content);
        const words = tokens.length > 0 ? alignWords({ sampleRate: PIPELINE_SAMPLE_RATE, samples: utterance.audio }, tokens) : [];
        return {
          role: utterance.role,
          content: utterance.content,
          words: words.map((word) => ({ word: word.word, start: seconds(utterance.offset, word.start), end: seconds(utterance.offset, word.end) })),
        };
      });
    const durationMs = (length * 1000) / PIPELINE_SAMPLE_RATE;
    return { wav: encodeWav({ sampleRate: PIPELINE_SAMPLE_RATE, samples: track }), durationMs, endedAt: new Date(this.startedAt + durationMs), transcriptObject };
  }
}

/** Writes `frame` at `offset`, growing the track (doubling) when needed. */
function place(track: Int16Array, frame: Int16Array, offset: number): Int16Array {
  let grown = track;
  if (offset + frame.length > grown.length) {
    grown = new Int16Array(Math.max(offset + frame.length, grown.length * 2));
    grown.set(track);
  }
  grown.set(frame, offset);
  return grown;
}
