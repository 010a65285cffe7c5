import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { DecoderPool, DecodingSlots } from "../../../src/providers/speech/pocketsphinx/decoder-pool.js";

class FakeDecoder {
  freed = false;
  private onFree: (() => void) | undefined;
  constructor(readonly id: number) {}
  free(): void {
    this.freed = true;
    this.onFree?.();
  }
  whenFreed(): Promise<void> {
    return this.freed ? Promise.resolve() : new Promise((resolve) => (this.onFree = resolve));
  }
}

/** A creator whose decoders appear when the test says so. */
function controlledCreator() {
  const pending: { resolve: (decoder: FakeDecoder) => void; reject: (error: Error) => void }[] = [];
  let made = 0;
  return {
    create: () => new Promise<FakeDecoder>((resolve, reject) => pending.push({ resolve, reject })),
    get started() {
      return pending.length;
    },
    finish(index: number) {
      pending[index]!.resolve(new FakeDecoder(++made));
    },
    fail(index: number) {
      pending[index]!.reject(new Error("no model"));
    },
  };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe("pocketsphinx decoder pool", () => {
  // The pool's idle sweeper is unref'd (it must not keep a server from exiting): run on its own, with nothing else
  // open, these tests would see the event loop empty while they wait for it, and the runner cancel every later test.
  let keepAlive: ReturnType<typeof setInterval>;
  before(() => {
    keepAlive = setInterval(() => undefined, 60_000);
  });
  after(() => clearInterval(keepAlive));

  it("creates decoders as borrowers need them, up to its size, and serves the rest as decoders are released", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 2, idleMs: 60_000 });
    const first = pool.acquire();
    const second = pool.acquire();
    const third = pool.acquire();
    assert.equal(creator.started, 2, "two borrowers start two decoders; the third waits at the pool's size");
    creator.finish(0);
    creator.finish(1);
    const [a, b] = await Promise.all([first, second]);
    assert.notEqual(a, b);
    let served: FakeDecoder | undefined;
    void third.then((decoder) => (served = decoder));
    await settled();
    assert.equal(served, undefined);
    pool.release(a);
    assert.equal(await third, a);
    pool.close();
  });

  it("serves a waiting borrower with a decoder released before its own new one is ready, and keeps the new one", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 4, idleMs: 60_000 });
    const firstBorrow = pool.acquire();
    creator.finish(0);
    const first = await firstBorrow;
    const waiting = pool.acquire();
    assert.equal(creator.started, 2);
    pool.release(first);
    assert.equal(await waiting, first);
    creator.finish(1);
    await settled();
    assert.equal(pool.size, 2);
    pool.release(first);
    const again = await pool.acquire();
    assert.equal(again, first, "the most recently released decoder is lent first");
    pool.close();
  });

  it("frees decoders left idle, and creates one again when a borrower comes", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 2, idleMs: 5 });
    const borrowed = pool.acquire();
    creator.finish(0);
    const decoder = await borrowed;
    pool.release(decoder);
    await decoder.whenFreed();
    assert.equal(pool.size, 0);
    const next = pool.acquire();
    assert.equal(creator.started, 2, "a freed decoder is never lent again");
    creator.finish(1);
    assert.notEqual(await next, decoder);
    pool.close();
  });

  it("does not free a decoder while it is lent", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 2, idleMs: 5 });
    const borrowedA = pool.acquire();
    const borrowedB = pool.acquire();
    creator.finish(0);
    creator.finish(1);
    const [kept, returned] = await Promise.all([borrowedA, borrowedB]);
    pool.release(returned);
    await returned.whenFreed();
    assert.equal(kept.freed, false);
    assert.equal(pool.size, 1);
    pool.release(kept);
    pool.close();
    assert.equal(kept.freed, true, "closing frees the idle decoders");
  });

  it("warms one decoder ahead of need, unless one exists or is being made", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 2, idleMs: 60_000 });
    const warmed = pool.warm();
    void pool.warm();
    assert.equal(creator.started, 1, "a second warming while the first decoder loads makes none");
    creator.finish(0);
    await warmed;
    await pool.warm();
    assert.equal(creator.started, 1);
    assert.equal((await pool.acquire()).id, 1, "the warmed decoder is lent");
    pool.close();
  });

  it("fails the waiting borrowers when no decoder can be created, and tries again for the next", async () => {
    const creator = controlledCreator();
    const pool = new DecoderPool(creator.create, { size: 2, idleMs: 60_000 });
    const first = pool.acquire();
    creator.fail(0);
    await assert.rejects(first, /no model/);
    assert.equal(pool.size, 0);
    const second = pool.acquire();
    creator.finish(1);
    assert.equal((await second).id, 1);
    pool.close();
  });
});

describe("pocketsphinx decoding slots", () => {
  it("runs at most its slots at once; a freed slot goes to urgent work, then to the earliest-begun utterance", async () => {
    const slots = new DecodingSlots(2);
    const order: string[] = [];
    const gates = new Map<string, () => void>();
    const work = (name: string) => () =>
      new Promise<void>((resolve) => {
        order.push(name);
        gates.set(name, resolve);
      });
    let endedIsUrgent = false;
    const runs = [
      slots.run({ urgent: () => false, since: 1 }, work("a")),
      slots.run({ urgent: () => false, since: 2 }, work("b")),
      slots.run({ urgent: () => false, since: 9 }, work("late")),
      slots.run({ urgent: () => false, since: 3 }, work("early")),
      slots.run({ urgent: () => endedIsUrgent, since: 10 }, work("ended")),
    ];
    await settled();
    assert.deepEqual(order, ["a", "b"]);
    endedIsUrgent = true;
    gates.get("a")!();
    await settled();
    assert.deepEqual(order, ["a", "b", "ended"], "the work that became urgent while it waited goes first");
    gates.get("b")!();
    await settled();
    assert.deepEqual(order, ["a", "b", "ended", "early"], "then the utterance that began first, not the first queued");
    gates.get("ended")!();
    gates.get("early")!();
    await settled();
    gates.get("late")!();
    await Promise.all(runs);
  });
});
