import { constants } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { concatSamples } from "../audio.js";
import { SpeechUnavailableError } from "../errors.js";
import { voicedPitches } from "../pitch.js";
import type { CallerVoice, CepstralState, RecognitionStream, StreamingSpeechToText } from "../stt.js";
import { DecoderPool, DecodingSlots, type Standing } from "./decoder-pool.js";
import { Libpocketsphinx, type DecoderArguments, type NativeDecoder } from "./libpocketsphinx.js";
import { CepstralMap, narrowbandChannel, withBandOf, type NarrowbandChannel } from "./narrowband.js";

const MODEL_ROOT = "/usr/share/pocketsphinx/model";

/**
 * Parley's decoder settings over pocketsphinx's defaults, chosen by the speech benchmark (docs/voice.md): a language
 * weight of 5 instead of 6.5 in the first pass lets the acoustics keep more paths alive (fewer words lost to a likelier
 * phrase), which the later passes then weigh with their own weights. At most 5,000 HMMs are searched in a frame (no
 * limit by default): the same words heard on the benchmark's human voices for 12–27% less CPU, and a bound on what
 * one noisy frame can cost the other calls.
 */
export const RECOGNITION_SETTINGS: DecoderArguments = { "-lw": "5", "-maxhmmpf": "5000" };

/**
 * The acoustic model adapted to each narrowband channel: a global MLLR transform of its means, learnt on mapped
 * narrowband frames by scripts/train-narrowband-adaptation.ts, applied by the decoders of narrowband callers.
 */
export const ADAPTATION_FILES: Record<NarrowbandChannel, string> = {
  resampled: fileURLToPath(new URL("./resampled.mllr", import.meta.url)),
  telephone: fileURLToPath(new URL("./telephone.mllr", import.meta.url)),
};

/**
 * The transform a decoder hears a caller of `channel` with: none for a wideband caller, nor where the caller's cepstra
 * are not mapped (the transform was learnt on mapped frames).
 */
function transformFor(decoder: NativeDecoder, channel: NarrowbandChannel | undefined): string | undefined {
  return channel && decoder.warpable ? ADAPTATION_FILES[channel] : undefined;
}

/** Adapts a decoder's model to a caller of `channel` before an utterance, on a decoding slot when it changes (a few milliseconds of a core). */
async function adaptTo(decoder: NativeDecoder, channel: NarrowbandChannel | undefined, standing: Standing): Promise<void> {
  const transform = transformFor(decoder, channel);
  if (!decoder.adaptedTo(transform)) await decoding.run(standing, () => decoder.adapt(transform));
}

/** All decoders of the process share its cores. */
const decoding = new DecodingSlots(availableParallelism());

/** How long an unused decoder is kept: past the pauses of a conversation, short of holding its ~95 MB for nothing. */
export const DECODER_IDLE_MS = 30_000;

/** The model files of a language tag (`en-US` → `/usr/share/pocketsphinx/model/en-us/…`), as Debian lays them out. */
export function modelFiles(language: string): { hmm: string; lm: string; dict: string } {
  const tag = language.toLowerCase();
  const root = path.join(MODEL_ROOT, tag);
  return { hmm: path.join(root, tag), lm: path.join(root, `${tag}.lm.bin`), dict: path.join(root, `cmudict-${tag}.dict`) };
}

/** Throws SpeechUnavailableError naming what is missing: Debian's library or the language's model. */
export async function checkPocketsphinx(language: string, library?: string): Promise<void> {
  Libpocketsphinx.load(library);
  for (const file of Object.values(modelFiles(language))) {
    try {
      await access(file, constants.R_OK);
    } catch {
      throw new SpeechUnavailableError("stt", `no pocketsphinx model for ${language} (${file} is missing): apt-get install pocketsphinx-en-us`);
    }
  }
}

/** The model's initial cepstral mean (`-cmninit` in its feat.params), where every caller's first turn starts. */
async function modelCepstralMean(hmm: string): Promise<Float32Array | undefined> {
  const params = await readFile(path.join(hmm, "feat.params"), "utf8").catch(() => "");
  const values = /^-cmninit\s+(\S+)/m.exec(params)?.[1]?.split(",").map(Number);
  return values?.every(Number.isFinite) ? Float32Array.from(values) : undefined;
}

/**
 * Carries a caller's cepstral-mean normalization across the caller's turns. pocketsphinx normalizes each utterance
 * with a mean it carries from the utterances the decoder heard before; a pooled decoder's last utterance may have
 * been another caller's, so each turn starts from its own caller's state, and a first turn from that of a decoder
 * that heard no one (the model's initial mean, replaced by the caller's own after the turn).
 */
class CallerNormalization {
  private constructor(private readonly fresh: CepstralState) {}

  /** Undefined when a new decoder's state does not read as expected (another library build): no memory then. */
  static check(decoder: NativeDecoder, initialMean: Float32Array | undefined): CallerNormalization | undefined {
    const state = decoder.cepstralState();
    if (!initialMean || !state || state.frames !== 0 || state.mean.length !== initialMean.length) return undefined;
    return state.mean.every((value, index) => Math.abs(value - initialMean[index]!) < 1e-3) ? new CallerNormalization(state) : undefined;
  }

  begin(decoder: NativeDecoder, caller: CallerVoice | undefined): void {
    decoder.setCepstralState(caller?.cepstralState ?? this.fresh);
  }

  end(decoder: NativeDecoder, caller: CallerVoice | undefined): void {
    if (caller) caller.cepstralState = decoder.cepstralState();
  }
}

/**
 * Vocal tract length normalization by pitch: the generic model hears a high voice (a shorter vocal tract: its formants
 * higher) better with its mel filters' frequencies divided by a warp factor. A caller whose pitch over the turns heard
 * so far averages at least `HIGH_PITCH_HZ` is heard with `HIGH_PITCH_WARP`, every other caller without warp; a first
 * turn, with no pitch of the caller's yet, takes the warp of its own audio when its decode starts over. Both chosen by
 * the speech benchmark (docs/voice.md): its male voices average 93–131 Hz and lose words when warped, its female voice
 * averages 170 Hz and gains, at 16 kHz and through a narrowband channel alike (the map and the adapted model were
 * learnt unwarped, and still hear a warped high voice better than an unwarped one).
 */
export const HIGH_PITCH_HZ = 150;
export const HIGH_PITCH_WARP = 1.25;
/** Voiced frames (20 ms each) heard before a caller's pitch is trusted. */
const PITCH_FRAMES = 10;

type Pitch = NonNullable<CallerVoice["pitch"]>;

/** The warp factor for a voice of this pitch. */
export function warpFor(pitch: Pitch | undefined): number {
  if (!pitch || pitch.frames < PITCH_FRAMES) return 1;
  return Math.exp(pitch.logHzSum / pitch.frames) >= HIGH_PITCH_HZ ? HIGH_PITCH_WARP : 1;
}

/** `pitch` with the voiced frames of `samples` added. */
export function withPitchOf(samples: Int16Array, pitch: Pitch = { logHzSum: 0, frames: 0 }): Pitch {
  const heard = voicedPitches(samples);
  return { logHzSum: heard.reduce((sum, hz) => sum + Math.log(hz), pitch.logHzSum), frames: pitch.frames + heard.length };
}

/**
 * A caller's first turn has no mean of the caller's to start from, and from the model's initial one it is heard with
 * about twice the errors of a later turn. Its decode therefore starts over from the mean of the audio heard so far,
 * fed again, when that audio reaches each of these lengths (samples at 16 kHz: 0.5 s, then 1.5 s): while the caller
 * still speaks, so the end of the turn waits for no second decode. A start over is skipped when no decoding slot is
 * free: the cores it would take are then other callers' (figures in docs/voice.md).
 */
const FIRST_TURN_RESTARTS = [8_000, 24_000];

/** Audio fed again after a start over goes in pieces of a quarter second, so that other callers' ends of turns go between. */
const REPLAY_PIECE = 4_000;

/** A first turn's audio, kept until the decode's last start over. */
class FirstTurn {
  private audio: Int16Array[] = [];
  private samples = 0;
  private readonly restarts = [...FIRST_TURN_RESTARTS];

  /** Counts `chunk` in; the turn's audio so far when the decode is to start over now. */
  heard(chunk: Int16Array): Int16Array | undefined {
    if (this.restarts.length === 0) return undefined;
    this.audio.push(chunk);
    this.samples += chunk.length;
    if (this.samples < this.restarts[0]!) return undefined;
    while (this.restarts.length > 0 && this.samples >= this.restarts[0]!) this.restarts.shift();
    const all = concatSamples(...this.audio);
    this.audio = this.restarts.length > 0 ? [all] : [];
    return all;
  }
}

/**
 * Feeds a decoder the caller's audio: a narrowband caller's cepstra, made at the caller's warp, mapped towards wideband
 * ones (see narrowband.ts); a decoder whose front end cannot be reached hears it as it is.
 */
function feedAs(decoder: NativeDecoder, channel: NarrowbandChannel | undefined, samples: Int16Array, wholeUtterance = false): Promise<number> {
  if (!channel || !decoder.warpable) return decoder.feed(samples, wholeUtterance);
  const map = CepstralMap.of(channel);
  return decoder.feedMapped(samples, (cepstra) => map.apply(cepstra), wholeUtterance);
}

/** Paths of the lattice weighed for phrase biasing, and the score a path gains for each word of a phrase it holds. */
const ALTERNATIVES = 40;
const BOOST_PER_WORD = 250;

/** The words of each phrase as lower-case word sequences (the recognizer's vocabulary is lower case). */
function phraseWords(phrases: readonly string[]): string[][] {
  return phrases.map((phrase) => phrase.toLowerCase().split(/[^a-z']+/).filter((word) => word !== "")).filter((words) => words.length > 0);
}

/** How many words of the hypothesis belong to a phrase it contains whole. */
function phraseWordsHeld(hypothesis: string, phrases: string[][]): number {
  const words = hypothesis.split(" ");
  let held = 0;
  for (const phrase of phrases) {
    for (let at = 0; at + phrase.length <= words.length; at++) {
      if (phrase.every((word, offset) => words[at + offset] === word)) {
        held += phrase.length;
        break;
      }
    }
  }
  return held;
}

/**
 * Phrase biasing: among the utterance's best paths, the one whose score plus a bonus per phrase word it holds is
 * highest. The generic language model still decides which paths exist; a phrase it never proposes is not forced in.
 */
function biased(decoder: NativeDecoder, best: string, phrases: string[][]): string {
  if (phrases.length === 0) return best;
  let chosen = best;
  let chosenScore = -Infinity;
  for (const { words, score } of decoder.alternatives(ALTERNATIVES)) {
    const weighed = score + BOOST_PER_WORD * phraseWordsHeld(words, phrases);
    if (weighed > chosenScore) {
      chosen = words;
      chosenScore = weighed;
    }
  }
  return chosen;
}

class PocketsphinxStream implements RecognitionStream {
  private pending: Int16Array[] = [];
  /** Everything written, for the caller's pitch and band once the turn is heard. */
  private readonly spoken: Int16Array[] = [];
  private heard = "";
  private state: "open" | "finished" | "cancelled" = "open";
  private wake: (() => void) | undefined;
  private readonly result: Promise<string>;
  /** The utterance's place in the queue for decoding slots: urgent once it has ended, else by when it began. */
  private readonly standing: Standing = { urgent: () => this.state === "finished", since: performance.now() };
  /** Narrowband when the transport declared it or the caller's earlier turns showed it; else chosen at a start over. */
  private channel: NarrowbandChannel | undefined;
  /** Whether the turn's audio teaches the caller's voice something: its pitch (for the warp) or its band (undeclared). */
  private readonly learnsFromTurn: boolean;

  constructor(
    private readonly pool: DecoderPool<NativeDecoder>,
    private readonly phrases: string[][],
    private readonly normalization: () => CallerNormalization | undefined,
    private readonly caller: CallerVoice | undefined,
    private readonly warps: boolean,
  ) {
    this.channel = narrowbandChannel(caller);
    this.learnsFromTurn = caller !== undefined && (warps || !caller.channel);
    this.result = this.run();
    // A cancelled stream's result is never read; its failure is not an unhandled rejection.
    this.result.catch(() => undefined);
  }

  write(samples: Int16Array): void {
    if (this.state !== "open" || samples.length === 0) return;
    this.pending.push(samples);
    if (this.learnsFromTurn) this.spoken.push(samples);
    this.wake?.();
  }

  partial(): string {
    return this.heard;
  }

  finish(): Promise<string> {
    if (this.state === "open") this.state = "finished";
    this.wake?.();
    return this.result;
  }

  cancel(): void {
    if (this.state === "open") this.state = "cancelled";
    this.wake?.();
  }

  private async run(): Promise<string> {
    const decoder = await this.pool.acquire();
    const normalization = this.normalization();
    // Only where the normalizer's state reads as expected: the start over sets it.
    const firstTurn = normalization && !this.caller?.cepstralState ? new FirstTurn() : undefined;
    try {
      await adaptTo(decoder, this.channel, this.standing);
      normalization?.begin(decoder, this.caller);
      if (decoder.warpable) decoder.setWarp(this.warps ? warpFor(this.caller?.pitch) : 1);
      await decoder.start();
      for (;;) {
        if (this.pending.length > 0 && this.state !== "cancelled") {
          let again: Int16Array | undefined;
          await decoding.run(
            this.standing,
            async () => {
              // What was written while the decoder worked or waited for a slot goes in one call.
              const chunk = this.pending.length === 1 ? this.pending[0]! : concatSamples(...this.pending);
              this.pending = [];
              await feedAs(decoder, this.channel, chunk);
              again = firstTurn?.heard(chunk);
            },
          );
          // Starting over decodes the turn so far again: not when other callers already wait for the cores.
          if (again && decoding.free) await this.startOver(decoder, again);
          // Read between native calls: the decoder is not safe to read while it searches on another thread.
          this.heard = decoder.hypothesis();
          continue;
        }
        if (this.state !== "open") break;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
      const words = await decoding.run(this.standing, () => decoder.end());
      if (this.state === "cancelled") return "";
      normalization?.end(decoder, this.caller);
      const { caller } = this;
      if (caller && this.learnsFromTurn) {
        const spoken = concatSamples(...this.spoken);
        // The band before the words are handed over (about 1 ms per second heard), so that the caller's next turn,
        // however soon it starts, is heard as the band says; the pitch after (a few milliseconds per second heard).
        if (!caller.channel) caller.band = withBandOf(spoken, caller.band);
        if (this.warps) setImmediate(() => (caller.pitch = withPitchOf(spoken, caller.pitch)));
      }
      return biased(decoder, words, this.phrases);
    } finally {
      this.pool.release(decoder);
    }
  }

  /** Starts the utterance over from the mean of `audio` (what it heard so far), which is fed again. */
  private async startOver(decoder: NativeDecoder, audio: Int16Array): Promise<void> {
    await decoding.run(this.standing, async () => {
      // The end set the mean from the frames heard; nothing is counted yet for the audio fed again.
      await decoder.end();
      const state = decoder.cepstralState();
      // A first turn's caller has no band yet: the audio heard so far tells whether the rest of the turn is narrowband.
      const wasNarrowband = this.channel !== undefined;
      this.channel ??= decoder.warpable ? narrowbandChannel(this.caller, withBandOf(audio)) : undefined;
      // A first turn's caller has no pitch yet: the audio heard so far chooses the warp of the rest of the turn.
      if (decoder.warpable && this.warps && !this.caller?.pitch) decoder.setWarp(warpFor(withPitchOf(audio)));
      // The mean the end set is that of the cepstra as they were fed: unmapped ones, when the turn turned out narrowband.
      const channel = this.channel;
      const turnedNarrowband = channel !== undefined && !wasNarrowband;
      const mean = turnedNarrowband ? await decoder.meanOf(audio, (cepstra) => CepstralMap.of(channel).apply(cepstra)) : state?.mean;
      if (state && mean) decoder.setCepstralState({ mean, sum: new Float32Array(state.sum.length), frames: 0 });
      // The rest of the turn, and what was heard of it, searched by the model adapted to the channel found.
      if (turnedNarrowband) await decoder.adapt(transformFor(decoder, channel));
      await decoder.start();
    });
    for (let at = 0; at < audio.length && this.state !== "cancelled"; at += REPLAY_PIECE) {
      await decoding.run(this.standing, () => feedAs(decoder, this.channel, audio.subarray(at, at + REPLAY_PIECE)));
    }
  }
}

/**
 * The cepstra (frames × 13) of a whole utterance through the front end a decoder of `language` makes at `warp`, each
 * frame mapped as a caller of `channel` is: what the speech benchmark gives `pocketsphinx_batch` for a narrowband one.
 */
export async function mappedCepstra(language: string, samples: Int16Array, channel: NarrowbandChannel, warp = 1): Promise<Float32Array> {
  const library = Libpocketsphinx.load();
  const files = modelFiles(language);
  const frontEnd = library.frontEnd({ "-hmm": files.hmm, "-lm": files.lm, "-dict": files.dict }, warp);
  try {
    const cepstra = await library.utteranceCepstra(frontEnd, samples);
    CepstralMap.of(channel).apply(cepstra);
    return cepstra;
  } finally {
    library.freeFrontEnd(frontEnd);
  }
}

/**
 * Offline speech-to-text with pocketsphinx, in this process through its C library: each utterance is decoded while
 * the caller speaks, so at the end of the turn only the last moments remain. Decoders (about 95 MB each: the
 * acoustic model, the dictionary and the language model's search tree) are pooled per instance and lent per
 * utterance, not per call, so memory follows how many callers spoke in the last `DECODER_IDLE_MS`, up to
 * `maxDecoders`. Each decoder loads its own models (`ps_init`): sharing one language model between decoders that
 * search at once on different threads would rest on a thread safety libpocketsphinx does not promise.
 */
export class PocketsphinxStt implements StreamingSpeechToText {
  readonly name = "pocketsphinx";
  private readonly pool: DecoderPool<NativeDecoder>;
  /** Set once the first decoder is loaded and its cepstral mean found readable. */
  private normalization: CallerNormalization | undefined;
  private readonly warps: boolean;

  /**
   * `library` names the shared library to load (Debian's by default); `search` adds decoder settings (beams…);
   * `warps: false` hears every caller without frequency warp (for the speech benchmark's comparison).
   */
  constructor(language: string, maxDecoders: number, library?: string, search: DecoderArguments = {}, { warps = true }: { warps?: boolean } = {}) {
    this.warps = warps;
    const files = modelFiles(language);
    /** Read once, when the first decoder is made. */
    let initialMean: Promise<Float32Array | undefined> | undefined;
    this.pool = new DecoderPool(async () => {
      await checkPocketsphinx(language, library);
      // Loading a decoder is half a second of a core: it takes a decoding slot, behind the ends of turns.
      const decoder = await decoding.run(
        { urgent: () => false, since: performance.now() },
        () => Libpocketsphinx.load(library).decoder({ "-hmm": files.hmm, "-lm": files.lm, "-dict": files.dict, ...RECOGNITION_SETTINGS, ...search }),
      );
      this.normalization ??= CallerNormalization.check(decoder, await (initialMean ??= modelCepstralMean(files.hmm)));
      return decoder;
    }, { size: maxDecoders, idleMs: DECODER_IDLE_MS });
  }

  /**
   * An utterance to recognize while it is spoken, favouring the words of `phrases` (names, products, places); `caller`
   * is the caller's voice as learnt from the call's turns before, updated when this one ends.
   */
  stream(phrases: readonly string[] = [], caller?: CallerVoice): RecognitionStream {
    return new PocketsphinxStream(this.pool, phraseWords(phrases), () => this.normalization, caller, this.warps);
  }

  /** A whole utterance at once, decoded as one (its cepstral mean from itself). */
  async transcribe(samples: Int16Array, signal?: AbortSignal, phrases: readonly string[] = []): Promise<string> {
    const channel = narrowbandChannel(undefined, withBandOf(samples));
    const decoder = await this.pool.acquire();
    const standing: Standing = { urgent: () => true, since: performance.now() };
    try {
      signal?.throwIfAborted();
      await adaptTo(decoder, channel, standing);
      this.normalization?.begin(decoder, undefined);
      if (decoder.warpable) decoder.setWarp(this.warps ? warpFor(withPitchOf(samples)) : 1);
      await decoder.start();
      const words = await decoding.run(
        standing,
        async () => {
          await feedAs(decoder, channel, samples, true);
          return decoder.end();
        },
      );
      return biased(decoder, words, phraseWords(phrases));
    } finally {
      this.pool.release(decoder);
    }
  }

  /** Loads a decoder ahead of a call's first turn. */
  warm(): Promise<void> {
    return this.pool.warm();
  }

  close(): void {
    this.pool.close();
  }
}
