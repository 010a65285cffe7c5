import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RecentHistories, sameHistory, type HistoryMessage } from "../../../src/domain/chat/recent-histories.js";

const user = (content: string): HistoryMessage => ({ role: "user", content });
const assistant = (content: string): HistoryMessage => ({ role: "assistant", content });

describe("the threads' recent histories", () => {
  test("a turn's guess is the remembered history's latest messages, then its own; taking it removes it", () => {
    const histories = new RecentHistories(1 << 20, () => true);
    histories.remember("t", { history: [user("a"), assistant("b"), user("c")], whole: true, reply: assistant("d"), limit: 3, eventSeq: 4 });
    assert.deepEqual(histories.take("t", { startNewConversation: false, userMessage: user("e"), limit: 2 }), [user("c"), assistant("d"), user("e")]);
    assert.equal(histories.take("t", { startNewConversation: false, userMessage: user("e"), limit: 2 }), undefined);
  });

  test("no guess from a history cut shorter than the limit, and a new conversation's is its message alone", () => {
    const histories = new RecentHistories(1 << 20, () => true);
    histories.remember("t", { history: [user("a"), assistant("b"), user("c")], whole: false, reply: assistant("d"), limit: 40, eventSeq: 4 });
    assert.equal(histories.take("t", { startNewConversation: false, userMessage: user("e"), limit: 40 }), undefined);
    assert.deepEqual(histories.take("t", { startNewConversation: true, userMessage: user("e"), limit: 40 }), [user("e")]);
  });

  test("a later thread event drops the entry, the turn's own do not; nothing is guessed while events may be lost", () => {
    let live = true;
    const histories = new RecentHistories(1 << 20, () => live);
    const remember = () => histories.remember("t", { history: [user("a")], whole: true, reply: assistant("b"), limit: 40, eventSeq: 2 });
    const turn = { startNewConversation: false, userMessage: user("c"), limit: 40 };
    remember();
    histories.heard("t", 1);
    histories.heard("t", 2);
    assert.deepEqual(histories.take("t", turn), [user("a"), assistant("b"), user("c")]);
    remember();
    histories.heard("t", 3);
    assert.equal(histories.take("t", turn), undefined);
    remember();
    live = false;
    assert.equal(histories.take("t", turn), undefined);
  });

  test("bounded by size, the oldest written evicted first; 0 keeps nothing", () => {
    const histories = new RecentHistories(2_000, () => true);
    for (const thread of ["a", "b", "c"]) histories.remember(thread, { history: [user("x".repeat(300))], whole: true, reply: assistant("y"), limit: 40, eventSeq: 2 });
    const turn = { startNewConversation: false, userMessage: null, limit: 40 };
    assert.equal(histories.take("a", turn), undefined);
    assert.ok(histories.take("c", turn));
    const off = new RecentHistories(0, () => true);
    off.remember("a", { history: [], whole: true, reply: assistant("y"), limit: 40, eventSeq: 2 });
    assert.equal(off.take("a", { ...turn, startNewConversation: true }), undefined);
  });

  test("histories are the same only with the same roles and contents in the same order", () => {
    assert.ok(sameHistory([user("a"), assistant("b")], [user("a"), assistant("b")]));
    assert.ok(!sameHistory([user("a"), assistant("b")], [user("a")]));
    assert.ok(!sameHistory([user("a")], [assistant("a")]));
    assert.ok(!sameHistory([user("a"), user("b")], [user("b"), user("a")]));
  });
});
