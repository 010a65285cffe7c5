/**
 * Learns the MLLR transforms of src/providers/speech/pocketsphinx/*.mllr (docs/voice.md, "Choosing the offline
 * engines"): the acoustic model's Gaussian means adapted, by one global linear transform, to what a narrowband
 * caller's frames look like after the cepstral map of narrowband-map.ts. flite's wideband voices speak the Harvard
 * sentences of bench/speech/narrowband-training.json through each channel; the decoder's front end makes the
 * cepstra, the map maps them, and sphinxtrain's `bw` and `mllr_solve` (Debian's `sphinxtrain`, needed only here) fit
 * the transform in two rounds: the second's alignments are made with the first's adapted means, and both are solved
 * against the model's own means, which is what the decoder's `-mllr` transforms. Deterministic:
 * `npx tsx scripts/train-narrowband-adaptation.ts` rewrites the files.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Libpocketsphinx } from "../src/providers/speech/pocketsphinx/libpocketsphinx.js";
import { CepstralMap, type NarrowbandChannel } from "../src/providers/speech/pocketsphinx/narrowband.js";
import { ADAPTATION_FILES, modelFiles } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { CHANNELS, TRAINING_VOICES, run, trainingSentences } from "./narrowband-channels.js";

const SPHINXTRAIN = "/usr/lib/sphinxtrain";
const ROUNDS = 2;

/**
 * Debian's model keeps its mixture weights only as pocketsphinx's quantized `sendump`; `bw` reads Sphinx-III
 * `mixture_weights`. The weights are stored by stream and codeword, a byte per senone: the negated base-1.0001
 * logarithm shifted right by `mixw_shift` bits.
 */
async function mixtureWeightsFromSendump(sendump: string, target: string): Promise<void> {
  const bytes = await readFile(sendump);
  let at = 0;
  const integer = () => {
    const value = bytes.readInt32LE(at);
    at += 4;
    return value;
  };
  const text = () => {
    const length = integer();
    const value = bytes.subarray(at, at + length - 1).toString("latin1");
    at += length;
    return length === 0 ? undefined : value;
  };
  text();
  const header = new Map<string, number>();
  for (let line = text(); line !== undefined; line = text()) {
    const [name, value] = line.split(/\s+/);
    header.set(name!, Number(value));
  }
  if (header.get("cluster_count")) throw new Error(`${sendump}: clustered mixture weights are not supported`);
  const streams = header.get("feature_count") ?? 1;
  const shift = header.get("mixw_shift") ?? 10;
  const codewords = integer();
  const senones = integer();
  const weights = new Float32Array(senones * streams * codewords);
  for (let stream = 0; stream < streams; stream++) {
    for (let codeword = 0; codeword < codewords; codeword++) {
      for (let senone = 0; senone < senones; senone++) weights[(senone * streams + stream) * codewords + codeword] = 1.0001 ** -(bytes[at++]! << shift);
    }
  }
  // A Sphinx-III parameter file: text header (padded so the data is 4-byte aligned), byte order mark, dimensions.
  let head = "s3\nversion 1.0\n";
  const misalignment = (head.length + "endhdr\n".length) % 4;
  head += `${" ".repeat(misalignment ? 4 - misalignment : 0)}endhdr\n`;
  const body = Buffer.alloc(20 + weights.byteLength);
  [0x11223344, senones, streams, codewords, weights.length].forEach((value, index) => body.writeUInt32LE(value, index * 4));
  Buffer.from(weights.buffer).copy(body, 20);
  await writeFile(target, Buffer.concat([Buffer.from(head, "latin1"), body]));
}

/** Writes cepstra as a Sphinx feature file: the number of values, then the values (32-bit, this machine's order). */
async function writeFeatures(file: string, cepstra: Float32Array): Promise<void> {
  const bytes = Buffer.alloc(4 + cepstra.byteLength);
  bytes.writeInt32LE(cepstra.length, 0);
  Buffer.from(cepstra.buffer, cepstra.byteOffset, cepstra.byteLength).copy(bytes, 4);
  await writeFile(file, bytes);
}

const sentences = await trainingSentences();
const files = modelFiles("en-US");
const dictionary = new Set((await readFile(files.dict, "utf8")).split("\n").map((line) => line.split(" ")[0]));
const library = Libpocketsphinx.load();
// Every frame kept (no speech detection): `bw` aligns the silences before and after with the transcript's own.
const frontEnd = library.frontEnd({ "-hmm": files.hmm, "-lm": files.lm, "-dict": files.dict, "-remove_silence": "no" }, 1);
const folder = await mkdtemp(path.join(tmpdir(), "parley-adaptation-"));
try {
  const model = path.join(folder, "model");
  await mkdir(model);
  await run("pocketsphinx_mdef_convert", ["-text", path.join(files.hmm, "mdef"), path.join(model, "mdef.txt")]);
  await mixtureWeightsFromSendump(path.join(files.hmm, "sendump"), path.join(model, "mixture_weights"));
  const ids: string[] = [];
  const transcripts: string[] = [];
  for (const voice of TRAINING_VOICES) {
    for (const [index, sentence] of sentences.entries()) {
      const words = sentence.toLowerCase().replace(/[^a-z' ]/g, " ").split(/\s+/).filter(Boolean);
      const unknown = words.filter((word) => !dictionary.has(word));
      if (unknown.length > 0) throw new Error(`"${sentence}": ${unknown.join(", ")} not in ${files.dict}`);
      const wav = path.join(folder, "wide.wav");
      await run("flite", ["-voice", voice, "-t", sentence, "-o", wav]);
      ids.push(`${voice}-${index}`);
      transcripts.push(`<s> ${words.join(" ")} </s> (${voice}-${index})`);
      for (const [channel, render] of Object.entries(CHANNELS) as [NarrowbandChannel, (typeof CHANNELS)[NarrowbandChannel]][]) {
        const cepstra = await library.utteranceCepstra(frontEnd, await render(wav, folder));
        CepstralMap.of(channel).apply(cepstra);
        await mkdir(path.join(folder, channel), { recursive: true });
        await writeFeatures(path.join(folder, channel, `${voice}-${index}.mfc`), cepstra);
      }
    }
  }
  await writeFile(path.join(folder, "train.fileids"), `${ids.join("\n")}\n`);
  await writeFile(path.join(folder, "train.transcription"), `${transcripts.join("\n")}\n`);
  const featParams = (await readFile(path.join(files.hmm, "feat.params"), "utf8")).split(/\s+/).filter(Boolean);
  const setting = (name: string) => featParams[featParams.indexOf(name) + 1]!;
  for (const channel of Object.keys(CHANNELS) as NarrowbandChannel[]) {
    const transform = ADAPTATION_FILES[channel];
    let means = path.join(files.hmm, "means");
    for (let round = 1; round <= ROUNDS; round++) {
      const accumulated = path.join(folder, `${channel}-counts-${round}`);
      await mkdir(accumulated);
      await run(path.join(SPHINXTRAIN, "bw"), [
        "-moddeffn", path.join(model, "mdef.txt"), "-ts2cbfn", `.${setting("-model")}.`,
        "-meanfn", means, "-varfn", path.join(files.hmm, "variances"), "-mixwfn", path.join(model, "mixture_weights"), "-tmatfn", path.join(files.hmm, "transition_matrices"),
        "-feat", setting("-feat"), "-svspec", setting("-svspec"), "-cmn", setting("-cmn"), "-agc", setting("-agc"),
        "-dictfn", files.dict, "-fdictfn", path.join(files.hmm, "noisedict"),
        "-ctlfn", path.join(folder, "train.fileids"), "-lsnfn", path.join(folder, "train.transcription"),
        "-cepdir", path.join(folder, channel), "-cepext", "mfc", "-accumdir", accumulated,
      ], { maxBuffer: 64 * 1024 * 1024 });
      await run(path.join(SPHINXTRAIN, "mllr_solve"), ["-meanfn", path.join(files.hmm, "means"), "-varfn", path.join(files.hmm, "variances"), "-outmllrfn", transform, "-accumdir", accumulated]);
      if (round < ROUNDS) {
        means = path.join(folder, `${channel}-means-${round}`);
        await run(path.join(SPHINXTRAIN, "mllr_transform"), ["-inmeanfn", path.join(files.hmm, "means"), "-outmeanfn", means, "-mllrmat", transform]);
      }
    }
    console.log(`${channel}: ${ids.length} utterances → ${transform}`);
  }
} finally {
  library.freeFrontEnd(frontEnd);
  await rm(folder, { recursive: true, force: true });
}
