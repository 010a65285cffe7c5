import assert from "node:assert/strict";
import { test } from "node:test";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("the chat turn's statements", (h) => {
  test("the turn's first statement commits under the server's synchronous_commit, as the second does", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const settings = await h().database.db.transaction(async (tx) => {
      const before = await tx.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting");
      await tx.query("SELECT conversation_id FROM parley_open_turn($1, NULL, false, $2, 'hello', '{}', 1, NULL, NULL, NULL)", [threadId, uuidv7()]);
      const open = await tx.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting");
      await tx.query("SELECT event_seq FROM parley_close_turn($1, 1, $2, 'hi', '{}', 0, NULL)", [threadId, uuidv7()]);
      const close = await tx.query<{ setting: string }>("SELECT current_setting('synchronous_commit') AS setting");
      return [before[0]!.setting, open[0]!.setting, close[0]!.setting];
    });
    assert.deepEqual(settings, [settings[0], settings[0], settings[0]]);
  });
});
