import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ToneTts } from "../../../src/providers/speech/tone/tone-tts.js";
import { type CalleePatience, SimulatedCallee } from "../../../src/providers/voice/simulated/simulated-callee.js";

/** Frames of silence after speech that end a line, as the pipeline's end of turn would (300 ms). */
const LINE_END_FRAMES = 15;

interface Ear {
  /** What happened, in order: lines starting and ending (by their number), and what the pipeline said. */
  log: string[];
  callee: SimulatedCallee;
  /** Frames heard so far: the test's clock, which runs in real time as the callee sends. */
  frames(): number;
}

/**
 * The pipeline's side of a simulated call, played by the test: it hears the callee's frames, tells lines apart by
 * their loudness, and on the end of each line does what `onLineEnd` says (send a transcript now, or after some
 * frames, or nothing at all).
 */
function listen(
  lines: string[],
  onLineEnd: (line: number, ear: Ear, after: (frames: number, action: () => void) => void) => void,
  options: { patience?: CalleePatience; signal?: AbortSignal } = {},
): Ear {
  const log: string[] = [];
  const scheduled: { at: number; action: () => void }[] = [];
  let frames = 0;
  let inLine = false;
  let silentRun = 0;
  let ended = 0;
  const ear: Ear = {
    log,
    frames: () => frames,
    callee: new SimulatedCallee({
      lines,
      tts: new ToneTts("higher"),
      turnMs: 40,
      signal: options.signal ?? new AbortController().signal,
      ...(options.patience ? { patience: options.patience } : {}),
      hear(frame) {
        frames += 1;
        const loud = frame.some((sample) => Math.abs(sample) > 1000);
        if (loud && !inLine) log.push(`line ${ended} starts`);
        if (loud) {
          inLine = true;
          silentRun = 0;
        } else if (inLine && ++silentRun === LINE_END_FRAMES) {
          inLine = false;
          log.push(`line ${ended} ends`);
          onLineEnd(ended++, ear, (count, action) => scheduled.push({ at: frames + count, action }));
        }
        for (const due of scheduled.filter((entry) => entry.at <= frames)) {
          scheduled.splice(scheduled.indexOf(due), 1);
          due.action();
        }
      },
    }),
  };
  return ear;
}

function heard(ear: Ear, text: string): void {
  ear.log.push(`heard "${text}"`);
  ear.callee.notify({ type: "transcript", role: "user", text, final: true });
}

function answered(ear: Ear, text: string): void {
  ear.log.push(`answered "${text}"`);
  // Pieces of the answer as it is generated are not its end.
  ear.callee.notify({ type: "transcript", role: "agent", text: text.slice(0, 3), final: false });
  ear.callee.notify({ type: "agent_speaking" });
  ear.callee.notify({ type: "transcript", role: "agent", text, final: true });
}

describe("the simulated callee", () => {
  test("says its next line only once the agent's answer has been played, and hangs up once its last line is heard", async () => {
    const ear = listen(["Hello?", "What are your opening hours?", "Bye."], (line, ear, after) => {
      heard(ear, `line ${line}`);
      // The agent's answer takes a second to play; its final transcript comes when it has been played.
      if (line < 2) after(50, () => answered(ear, `answer ${line}`));
    });
    assert.equal(await ear.callee.run(), true);
    assert.deepEqual(ear.log, [
      "line 0 starts",
      "line 0 ends",
      'heard "line 0"',
      'answered "answer 0"',
      "line 1 starts",
      "line 1 ends",
      'heard "line 1"',
      'answered "answer 1"',
      "line 2 starts",
      "line 2 ends",
      'heard "line 2"',
    ]);
  });

  test("goes on with its next line when a line is never heard, and when an answer never ends, after its patience", async () => {
    const ear = listen(
      ["Hello?", "Yes, tomorrow works.", "Bye."],
      (line, ear) => {
        // The recognizer made nothing of the first line; the second is heard but the agent never finishes answering.
        if (line >= 1) heard(ear, `line ${line}`);
      },
      { patience: { heardMs: 300, answerMs: 600 } },
    );
    assert.equal(await ear.callee.run(), true);
    assert.deepEqual(ear.log, [
      "line 0 starts",
      "line 0 ends",
      "line 1 starts",
      "line 1 ends",
      'heard "line 1"',
      "line 2 starts",
      "line 2 ends",
      'heard "line 2"',
    ]);
  });

  test("makes its lines before the call connects, and stops when the call is aborted", async () => {
    const controller = new AbortController();
    const ear = listen(
      ["Hello?", "Are you there?"],
      (line, ear) => {
        heard(ear, `line ${line}`);
        controller.abort();
      },
      { signal: controller.signal },
    );
    assert.equal(await ear.callee.prepare(), true);
    assert.equal(ear.frames(), 0, "nothing is sent while the phone rings");
    assert.equal(await ear.callee.run(), false);
    assert.deepEqual(ear.log, ["line 0 starts", "line 0 ends", 'heard "line 0"']);

    const aborted = new AbortController();
    aborted.abort();
    const unanswered = listen(["Hello?"], () => undefined, { signal: aborted.signal });
    assert.equal(await unanswered.callee.prepare(), false);
    assert.equal(await unanswered.callee.run(), false);
    assert.equal(unanswered.frames(), 0);
  });
});
