import { concatSamples, FRAME_MS } from "../audio.js";
import type { VoiceActivityDetector } from "../vad.js";

export interface TurnDetectorOptions {
  /** The longest silence after speech that ends the turn. */
  endOfTurnMs: number;
  /** The silence that ends a turn whose words so far read as a complete sentence (`isComplete`). */
  minEndOfTurnMs: number;
  /** Speech needed (within a slightly longer window) before it counts: a click or a cough is not a turn. */
  startMs: number;
  /** Audio kept from before speech was detected, so that the first syllable reaches the recognizer whole. */
  preRollMs: number;
  /** A turn this long ends even without a pause (someone who never stops, or steady noise taken for speech). */
  maxTurnMs: number;
}

export const defaultTurnOptions: TurnDetectorOptions = { endOfTurnMs: 500, minEndOfTurnMs: 200, startMs: 100, preRollMs: 200, maxTurnMs: 30_000 };

export type TurnEvent =
  /** `audio`: the turn so far, from its pre-roll to the frame that started it. */
  | { type: "speech_started"; audio: Int16Array }
  /**
   * `audio`: the turn from its pre-roll to a little after its last speech frame; `startFrame`: the number (from 1)
   * of the audio's first frame; `endFrame`: the number of the last frame of speech.
   */
  | { type: "turn_ended"; audio: Int16Array; startFrame: number; endFrame: number };

/**
 * End-of-turn detection over a frame classifier: speech starts when most of a short window of frames is speech,
 * and the turn ends after `endOfTurnMs` without speech, or after `minEndOfTurnMs` when `isComplete` says the words
 * heard so far read as a complete sentence. Frames are fed in order, all of the same size.
 */
export class TurnDetector {
  private readonly startWindow: boolean[] = [];
  private readonly preRoll: Int16Array[] = [];
  private turn: Int16Array[] | undefined;
  private silentFrames = 0;
  private frames = 0;
  private lastSpeechFrame = 0;
  private turnStartFrame = 0;

  constructor(
    private readonly vad: VoiceActivityDetector,
    private readonly options: TurnDetectorOptions = defaultTurnOptions,
    private readonly isComplete: () => boolean = () => false,
  ) {}

  get inSpeech(): boolean {
    return this.turn !== undefined;
  }

  /** Frames fed so far: the detector's clock (one frame is FRAME_MS). */
  get frameCount(): number {
    return this.frames;
  }

  push(frame: Int16Array): TurnEvent | undefined {
    this.frames += 1;
    const speech = this.vad.isSpeech(frame);
    const copy = frame.slice();
    if (this.turn === undefined) return this.listen(copy, speech);
    this.turn.push(copy);
    if (speech) {
      this.silentFrames = 0;
      this.lastSpeechFrame = this.frames;
    } else {
      this.silentFrames += 1;
    }
    const tooLong = this.turn.length * FRAME_MS >= this.options.maxTurnMs;
    const silenceMs = this.silentFrames * FRAME_MS;
    const ended = silenceMs >= this.options.endOfTurnMs || (silenceMs >= this.options.minEndOfTurnMs && this.isComplete());
    if (!ended && !tooLong) return undefined;
    // Keep 100 ms after the last speech frame: word endings (a fading "s") are often classified as silence.
    const keep = Math.min(this.turn.length, this.turn.length - this.silentFrames + Math.round(100 / FRAME_MS));
    const audio = concatSamples(...this.turn.slice(0, keep));
    this.turn = undefined;
    this.silentFrames = 0;
    this.startWindow.length = 0;
    return { type: "turn_ended", audio, startFrame: this.turnStartFrame, endFrame: tooLong ? this.frames : this.lastSpeechFrame };
  }

  private listen(frame: Int16Array, speech: boolean): TurnEvent | undefined {
    const needed = Math.max(1, Math.round(this.options.startMs / FRAME_MS));
    const window = needed + 2;
    this.startWindow.push(speech);
    if (this.startWindow.length > window) this.startWindow.shift();
    this.preRoll.push(frame);
    const preRollFrames = Math.max(window, Math.round(this.options.preRollMs / FRAME_MS));
    if (this.preRoll.length > preRollFrames) this.preRoll.shift();
    if (this.startWindow.filter(Boolean).length < needed) return undefined;
    this.turn = this.preRoll.splice(0);
    this.turnStartFrame = this.frames - this.turn.length + 1;
    this.silentFrames = 0;
    this.lastSpeechFrame = this.frames;
    return { type: "speech_started", audio: concatSamples(...this.turn) };
  }
}

