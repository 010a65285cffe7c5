import { fileURLToPath } from "node:url";
import { SpeechUnavailableError } from "../errors.js";
import type { CepstralState } from "../stt.js";
import { loadKoffi, onThreadPool, type Koffi, type NativeFunction } from "./native.js";

/** The Debian packages' library names (libpocketsphinx3, libsphinxbase3: pocketsphinx 5prealpha). */
const POCKETSPHINX = "libpocketsphinx.so.3";
const SPHINXBASE = "libsphinxbase.so.3";

/** The settings of one decoder: pocketsphinx's command-line arguments (`-hmm`, `-lm`, `-dict`, beams…). */
export type DecoderArguments = Record<string, string>;

/** Cepstral coefficients per frame in the generic model (`-ceplen`): the length of a cepstral mean. */
export const CEPSTRUM_LENGTH = 13;
/**
 * Where sphinxbase 5prealpha's `feat_t` holds its `cmn_t *cmn_struct`, and the fields of `cmn_t` (`cmn_mean`,
 * `cmn_var`, `sum`, `nframe`, `veclen`), on a 64-bit build: the library has no accessor for the running sum and count.
 * What is read is checked (the vector length, the model's `-cmninit` as the fresh mean) before it is trusted.
 */
const FEAT_CMN_OFFSET = 88;
const CMN_MEAN_OFFSET = 0;
const CMN_SUM_OFFSET = 16;
const CMN_FRAMES_OFFSET = 24;
const CMN_VECLEN_OFFSET = 28;
/**
 * Where pocketsphinx 5prealpha's `ps_decoder_t` holds its `acmod_t *acmod`, and `acmod_t` its `fe_t *fe` (the front
 * end that turns samples into cepstra) and `feat_t *fcb`, on a 64-bit build. A decoder's front end is swapped for one
 * with another frequency warp before an utterance; both pointers read must be those `ps_get_fe` and `ps_get_feat`
 * return before the layout is trusted.
 */
const DECODER_ACMOD_OFFSET = 16;
const ACMOD_FE_OFFSET = 24;
const ACMOD_FEAT_OFFSET = 32;

/**
 * The MLLR transform that leaves the acoustic model as it was shipped (the identity: pocketsphinx reloads the means
 * and variances from the model's files before applying any transform), which a decoder adapted to a channel takes
 * to hear a caller without one: pocketsphinx has no way to remove a transform.
 */
const UNADAPTED = fileURLToPath(new URL("./identity.mllr", import.meta.url));

/** Cepstra made by a front end: sphinxbase's `mfcc_t **` block and its number of frames. */
export interface CepstralBlock {
  pointer: unknown;
  frames: number;
}

/**
 * One native pocketsphinx decoder (`ps_decoder_t`), fed audio as it arrives. Not safe for two callers at once: the
 * pool hands each one to a single utterance at a time, and every call below is awaited before the next.
 */
export class NativeDecoder {
  /** The front end the decoder was made with, and those made by `setWarp`, by warp. */
  private readonly ownFrontEnd: unknown;
  private readonly frontEnds = new Map<number, unknown>();
  /** The front end the decoder holds now. */
  private held: unknown;
  /** The MLLR transform file the acoustic model's means are adapted by now; none as the decoder was made. */
  private transform: string | undefined;

  constructor(
    private readonly library: Libpocketsphinx,
    private readonly handle: unknown,
    private readonly settings: DecoderArguments,
  ) {
    this.ownFrontEnd = library.frontEndOf(handle);
    this.held = this.ownFrontEnd;
    // The acoustic model's feature buffer grows with the utterance, whatever the passes: in the fixed ring that
    // pocketsphinx 5prealpha keeps when the fwdflat pass is off, cepstra fed (`feedMapped`) in a piece larger than the
    // ring were searched wrongly, heard as nothing, and the next utterance aborted the process (an assertion in
    // ngram_search_fwdtree.c).
    library.growFeatures(library.koffi.decode(handle, DECODER_ACMOD_OFFSET, "void *"), 1);
  }

  /** Whether `setWarp` can be used: this build's layout is the one expected. */
  get warpable(): boolean {
    return this.ownFrontEnd !== undefined;
  }

  /**
   * Vocal tract length normalization for the next utterance: the mel filters' frequencies are divided by `warp`
   * (sphinxbase's `-warp_type inverse_linear`), 1 for none. Only between utterances, and only when `warpable`. The
   * front end of each warp is made once per decoder, warp 1 included, so that every warp is Parley's own making.
   */
  setWarp(warp: number): void {
    if (this.ownFrontEnd === undefined) throw new Error("this pocketsphinx build's front end cannot be swapped");
    let frontEnd = this.frontEnds.get(warp);
    if (frontEnd === undefined) {
      frontEnd = this.library.frontEnd(this.settings, warp);
      this.frontEnds.set(warp, frontEnd);
    }
    this.holdFrontEnd(frontEnd);
  }

  private holdFrontEnd(frontEnd: unknown): void {
    this.held = frontEnd;
    this.library.koffi.encode(this.library.koffi.decode(this.handle, DECODER_ACMOD_OFFSET, "void *"), ACMOD_FE_OFFSET, "void *", frontEnd);
  }

  /** Whether `adapt(transform)` would change the acoustic model. */
  adaptedTo(transform: string | undefined): boolean {
    return this.transform === transform;
  }

  /**
   * Adapts the acoustic model by the MLLR transform in `transform` (an `-mllr` file), or back to the model as shipped
   * when undefined: the means and variances are read again from the model's files and transformed, a few milliseconds
   * instead of the half second a new decoder takes. Only between utterances.
   */
  async adapt(transform: string | undefined): Promise<void> {
    if (this.transform === transform) return;
    const loaded = this.library.transform(transform ?? UNADAPTED);
    // The decoder takes a reference of its own, given back when it is freed or adapted again.
    await onThreadPool<unknown>(this.library.updateTransform, this.handle, this.library.retainTransform(loaded));
    this.transform = transform;
  }

  start(): Promise<number> {
    return onThreadPool<number>(this.library.startUtterance, this.handle);
  }

  /**
   * 16 kHz 16-bit samples, searched at once. `wholeUtterance`: these are all of it, so the cepstral mean is taken
   * over the whole utterance instead of being carried from the utterances before (better on a first utterance).
   */
  feed(samples: Int16Array, wholeUtterance = false): Promise<number> {
    return onThreadPool<number>(this.library.processRaw, this.handle, samples, samples.length, 0, wholeUtterance ? 1 : 0);
  }

  /**
   * Like `feed`, but the cepstra that the decoder's front end makes of the samples pass through `map` (frames × 13
   * coefficients, changed in place) before they are searched (`ps_process_cep`). The front end is the one the decoder
   * holds, so that the utterance's last partial frame, which `ps_end_utt` takes from it, continues the same audio;
   * that one frame is searched unmapped. Only when `warpable`.
   */
  async feedMapped(samples: Int16Array, map: (cepstra: Float32Array) => void, wholeUtterance = false): Promise<number> {
    if (this.held === undefined) throw new Error("this pocketsphinx build's front end cannot be reached");
    const block = await this.library.cepstra(this.held, samples);
    try {
      if (block.frames === 0) return 0;
      const values = this.library.readBlock(block);
      map(values);
      this.library.writeBlock(block, values);
      return await onThreadPool<number>(this.library.processCepstra, this.handle, block.pointer, block.frames, 0, wholeUtterance ? 1 : 0);
    } finally {
      this.library.freeBlock(block.pointer);
    }
  }

  /**
   * The mean of the cepstra that the decoder's front end makes of `samples` (the frames its speech detection keeps),
   * each passed through `map`: a cepstral mean for the next utterance. Only between utterances, and when `warpable`.
   */
  async meanOf(samples: Int16Array, map: (cepstra: Float32Array) => void): Promise<Float32Array | undefined> {
    if (this.held === undefined) throw new Error("this pocketsphinx build's front end cannot be reached");
    const cepstra = await this.library.utteranceCepstra(this.held, samples);
    const frames = cepstra.length / CEPSTRUM_LENGTH;
    if (frames === 0) return undefined;
    map(cepstra);
    const mean = new Float32Array(CEPSTRUM_LENGTH);
    for (let at = 0; at < cepstra.length; at++) mean[at % CEPSTRUM_LENGTH]! += cepstra[at]! / frames;
    return mean;
  }

  /** The best hypothesis so far, during an utterance or after its end ("" when nothing was heard). */
  hypothesis(): string {
    const score = [0];
    return (this.library.hypothesis(this.handle, score) as string | null) ?? "";
  }

  /** Ends the utterance (the final search passes run here) and returns its words. */
  async end(): Promise<string> {
    await onThreadPool<number>(this.library.endUtterance, this.handle);
    return this.hypothesis();
  }

  /**
   * The utterance's best distinct hypotheses after its end, best first, with their path scores (log probabilities in
   * pocketsphinx's units), read from its word lattice: at most `limit` paths are walked.
   */
  alternatives(limit: number): { words: string; score: number }[] {
    const found = new Map<string, number>();
    let path = this.library.nbest(this.handle);
    for (let walked = 0; path && walked < limit; walked++) {
      const score = [0];
      const words = (this.library.nbestHypothesis(path, score) as string | null) ?? "";
      if (!found.has(words)) found.set(words, score[0]!);
      path = this.library.nbestNext(path);
    }
    if (path) this.library.nbestFree(path);
    return [...found].map(([words, score]) => ({ words, score }));
  }

  /**
   * The live cepstral-mean normalizer's state: the mean the next utterance is normalized with, and the running sum
   * and frame count it is updated from at each utterance's end. Undefined when this build's layout is not the one
   * expected (the vector length read is not the model's).
   */
  cepstralState(): CepstralState | undefined {
    const normalizer = this.normalizer();
    if (this.library.koffi.decode(normalizer, CMN_VECLEN_OFFSET, "int32_t") !== CEPSTRUM_LENGTH) return undefined;
    const vector = this.library.koffi.array("float", CEPSTRUM_LENGTH);
    const read = (offset: number) => Float32Array.from(this.library.koffi.decode(this.library.koffi.decode(normalizer, offset, "void *"), 0, vector) as ArrayLike<number>);
    return { mean: read(CMN_MEAN_OFFSET), sum: read(CMN_SUM_OFFSET), frames: this.library.koffi.decode(normalizer, CMN_FRAMES_OFFSET, "int32_t") as number };
  }

  /** Sets the normalizer's state before an utterance: a caller's own, or the state of a decoder that heard no one. */
  setCepstralState(state: CepstralState): void {
    const normalizer = this.normalizer();
    const vector = this.library.koffi.array("float", CEPSTRUM_LENGTH);
    this.library.koffi.encode(this.library.koffi.decode(normalizer, CMN_MEAN_OFFSET, "void *"), 0, vector, Array.from(state.mean));
    this.library.koffi.encode(this.library.koffi.decode(normalizer, CMN_SUM_OFFSET, "void *"), 0, vector, Array.from(state.sum));
    this.library.koffi.encode(normalizer, CMN_FRAMES_OFFSET, "int32_t", state.frames);
  }

  private normalizer(): unknown {
    return this.library.koffi.decode(this.library.featureExtractor(this.handle), FEAT_CMN_OFFSET, "void *");
  }

  free(): void {
    // The decoder frees the front end it holds: its own, given back first.
    if (this.ownFrontEnd !== undefined) this.holdFrontEnd(this.ownFrontEnd);
    for (const frontEnd of this.frontEnds.values()) this.library.freeFrontEnd(frontEnd);
    this.library.free(this.handle);
  }
}

/** libpocketsphinx through an FFI: decoders in this process, fed continuously, instead of a program per utterance. */
export class Libpocketsphinx {
  readonly startUtterance: NativeFunction;
  readonly processRaw: NativeFunction;
  readonly endUtterance: NativeFunction;
  readonly hypothesis: NativeFunction;
  readonly free: NativeFunction;
  readonly nbest: NativeFunction;
  readonly nbestNext: NativeFunction;
  readonly nbestHypothesis: NativeFunction;
  readonly nbestFree: NativeFunction;
  readonly featureExtractor: NativeFunction;
  readonly freeFrontEnd: NativeFunction;
  readonly processCepstra: NativeFunction;
  readonly frontEndStart: NativeFunction;
  readonly frontEndProcess: NativeFunction;
  readonly frontEndEnd: NativeFunction;
  readonly freeBlock: NativeFunction;
  readonly growFeatures: NativeFunction;
  readonly updateTransform: NativeFunction;
  readonly retainTransform: NativeFunction;
  private readonly readTransform: NativeFunction;
  /** MLLR transforms read, by file: each is read once and shared by the decoders, which count their references. */
  private readonly transforms = new Map<string, unknown>();
  private readonly frontEndInit: NativeFunction;
  private readonly decoderFrontEnd: NativeFunction;
  private readonly parseArgumentFile: NativeFunction;
  private readonly freeArguments: NativeFunction;
  private readonly defaultArguments: NativeFunction;
  private readonly configure: NativeFunction;
  private readonly init: NativeFunction;

  private constructor(
    readonly koffi: Koffi,
    library: string,
  ) {
    const sphinxbase = koffi.load(SPHINXBASE);
    const pocketsphinx = koffi.load(library);
    this.configure = sphinxbase.func("void *cmd_ln_init(void *inout, void *defn, int strict, ...)");
    this.defaultArguments = pocketsphinx.func("void *ps_args()");
    this.init = pocketsphinx.func("void *ps_init(void *config)");
    this.startUtterance = pocketsphinx.func("int ps_start_utt(void *ps)");
    this.processRaw = pocketsphinx.func("int ps_process_raw(void *ps, const int16_t *data, size_t n_samples, int no_search, int full_utt)");
    this.endUtterance = pocketsphinx.func("int ps_end_utt(void *ps)");
    this.hypothesis = pocketsphinx.func("const char *ps_get_hyp(void *ps, _Out_ int *score)");
    this.free = pocketsphinx.func("int ps_free(void *ps)");
    this.nbest = pocketsphinx.func("void *ps_nbest(void *ps)");
    this.nbestNext = pocketsphinx.func("void *ps_nbest_next(void *nbest)");
    this.nbestHypothesis = pocketsphinx.func("const char *ps_nbest_hyp(void *nbest, _Out_ int *score)");
    this.nbestFree = pocketsphinx.func("void ps_nbest_free(void *nbest)");
    this.featureExtractor = pocketsphinx.func("void *ps_get_feat(void *ps)");
    this.decoderFrontEnd = pocketsphinx.func("void *ps_get_fe(void *ps)");
    this.frontEndInit = sphinxbase.func("void *fe_init_auto_r(void *config)");
    this.freeFrontEnd = sphinxbase.func("int fe_free(void *fe)");
    this.processCepstra = pocketsphinx.func("int ps_process_cep(void *ps, void *data, int n_frames, int no_search, int full_utt)");
    this.frontEndStart = sphinxbase.func("int fe_start_utt(void *fe)");
    this.frontEndProcess = sphinxbase.func("int fe_process_utt(void *fe, const int16_t *spch, size_t nsamps, _Out_ void **cep_block, _Out_ int *nframes)");
    this.frontEndEnd = sphinxbase.func("int fe_end_utt(void *fe, float *cepvector, _Out_ int *nframes)");
    this.freeBlock = sphinxbase.func("void ckd_free_2d(void *block)");
    this.growFeatures = pocketsphinx.func("int acmod_set_grow(void *acmod, int grow)");
    this.readTransform = pocketsphinx.func("void *ps_mllr_read(const char *file)");
    this.retainTransform = pocketsphinx.func("void *ps_mllr_retain(void *mllr)");
    this.updateTransform = pocketsphinx.func("void *ps_update_mllr(void *ps, void *mllr)");
    this.parseArgumentFile = sphinxbase.func("void *cmd_ln_parse_file_r(void *inout, void *defn, const char *filename, int strict)");
    this.freeArguments = sphinxbase.func("int cmd_ln_free_r(void *config)");
    // pocketsphinx logs to one process-wide FILE; a decoder's `-logfn` closes and reopens it, under the feet of
    // decoders searching on other threads (a crash, or a thread stuck on the FILE's lock). Logging is turned off
    // once here instead, and no decoder is given `-logfn`.
    sphinxbase.func("void err_set_logfp(void *stream)")(null);
  }

  private static readonly loaded = new Map<string, Libpocketsphinx>();

  /** Throws SpeechUnavailableError when the FFI package or the library (Debian's by default) is missing. */
  static load(library: string = POCKETSPHINX): Libpocketsphinx {
    const known = Libpocketsphinx.loaded.get(library);
    if (known) return known;
    const koffi = loadKoffi("stt");
    let loaded: Libpocketsphinx;
    try {
      loaded = new Libpocketsphinx(koffi, library);
    } catch {
      throw new SpeechUnavailableError("stt", "libpocketsphinx is not installed: apt-get install pocketsphinx pocketsphinx-en-us");
    }
    Libpocketsphinx.loaded.set(library, loaded);
    return loaded;
  }

  /** A new decoder with these settings; loading its models takes about a second, off the event loop. */
  async decoder(settings: DecoderArguments): Promise<NativeDecoder> {
    const handle = await onThreadPool<unknown>(this.init, this.arguments(settings));
    if (!handle) throw new SpeechUnavailableError("stt", "pocketsphinx could not load its model (is pocketsphinx-en-us installed?)");
    return new NativeDecoder(this, handle, settings);
  }

  /** The MLLR transform in `file`, read once. */
  transform(file: string): unknown {
    let transform = this.transforms.get(file);
    if (transform === undefined) {
      transform = this.readTransform(file);
      if (!transform) throw new SpeechUnavailableError("stt", `pocketsphinx could not read the MLLR transform ${file}`);
      this.transforms.set(file, transform);
    }
    return transform;
  }

  /**
   * A front end like the one a decoder with these settings makes (the model's feat.params over the settings, as
   * `ps_init` reads them) with the mel filters warped by `warp`. About 40 KB (filters, FFT tables, buffers).
   */
  frontEnd(settings: DecoderArguments, warp: number): unknown {
    const config = this.arguments({ ...settings, "-warp_type": "inverse_linear", "-warp_params": String(warp) });
    const hmm = settings["-hmm"];
    if (hmm && !this.parseArgumentFile(config, this.defaultArguments(), `${hmm}/feat.params`, 0)) {
      this.freeArguments(config);
      throw new SpeechUnavailableError("stt", `sphinxbase could not read ${hmm}/feat.params`);
    }
    const frontEnd = this.frontEndInit(config);
    // The front end holds its own reference to the settings.
    this.freeArguments(config);
    if (!frontEnd) throw new SpeechUnavailableError("stt", `sphinxbase refused a front end warped by ${warp}`);
    return frontEnd;
  }

  /**
   * The cepstra of `samples` through `frontEnd`, continuing its utterance (the samples short of a frame wait in it for
   * the next call): a block sphinxbase allocated, `frames` rows of 13 coefficients, to be given to `freeBlock`.
   */
  async cepstra(frontEnd: unknown, samples: Int16Array): Promise<CepstralBlock> {
    const block: unknown[] = [null];
    const frames = [0];
    await onThreadPool<number>(this.frontEndProcess, frontEnd, samples, samples.length, block, frames);
    return { pointer: block[0], frames: frames[0]! };
  }

  /** A block's coefficients, frame after frame (sphinxbase allocates its rows in one piece). */
  readBlock(block: CepstralBlock): Float32Array {
    return Float32Array.from(this.koffi.decode(this.koffi.decode(block.pointer, 0, "void *"), 0, this.koffi.array("float", block.frames * CEPSTRUM_LENGTH)) as ArrayLike<number>);
  }

  writeBlock(block: CepstralBlock, values: Float32Array): void {
    this.koffi.encode(this.koffi.decode(block.pointer, 0, "void *"), 0, this.koffi.array("float", block.frames * CEPSTRUM_LENGTH), Array.from(values));
  }

  /** The cepstra of a whole utterance through `frontEnd`, its last partial frame included, frame after frame. */
  async utteranceCepstra(frontEnd: unknown, samples: Int16Array): Promise<Float32Array> {
    this.frontEndStart(frontEnd);
    const block = await this.cepstra(frontEnd, samples);
    const values = block.frames > 0 ? this.readBlock(block) : new Float32Array(0);
    this.freeBlock(block.pointer);
    const last = new Float32Array(CEPSTRUM_LENGTH);
    const ended = [0];
    this.frontEndEnd(frontEnd, last, ended);
    if (ended[0] === 0) return values;
    const all = new Float32Array(values.length + CEPSTRUM_LENGTH);
    all.set(values);
    all.set(last, values.length);
    return all;
  }

  /** The front end a decoder holds, or undefined when this build's layout is not the one expected. */
  frontEndOf(decoder: unknown): unknown {
    const acousticModel = this.koffi.decode(decoder, DECODER_ACMOD_OFFSET, "void *");
    if (!acousticModel) return undefined;
    const held = (offset: number) => this.koffi.decode(acousticModel, offset, "void *");
    const frontEnd = held(ACMOD_FE_OFFSET);
    const features = held(ACMOD_FEAT_OFFSET);
    const same = (a: unknown, b: unknown) => a !== null && b !== null && this.koffi.address(a) === this.koffi.address(b);
    return same(frontEnd, this.decoderFrontEnd(decoder)) && same(features, this.featureExtractor(decoder)) ? frontEnd : undefined;
  }

  private arguments(settings: DecoderArguments): unknown {
    const variadic = Object.entries(settings).flatMap(([name, value]) => ["str", name, "str", value]);
    const config = this.configure(null, this.defaultArguments(), 1, ...variadic, "void *", null);
    if (!config) throw new SpeechUnavailableError("stt", `pocketsphinx refused its settings: ${JSON.stringify(settings)}`);
    return config;
  }
}
