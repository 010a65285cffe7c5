/**
 * The fake model provider of the tests (test/support/fake-llm-servers.ts) in a process of its own, streaming with
 * the behaviour in FAKE_BEHAVIOUR (JSON). It keeps no request log here: at a thousand streams a second that log
 * would be the only thing growing.
 */
import { startFakeOpenAi, type FakeBehaviour } from "../../test/support/fake-llm-servers.js";
import { serveParent } from "./children.js";

const behaviour = JSON.parse(process.env.FAKE_BEHAVIOUR ?? "{}") as FakeBehaviour;
const server = await startFakeOpenAi(behaviour);
const trim = setInterval(() => server.requests.splice(0), 1000);

serveParent({ url: server.url }, {}, async () => {
  clearInterval(trim);
  await server.close();
});
