/**
 * The work before a streamed chat's first token, served by a bare `node:http` server with nothing around it: the
 * turn's first statement through Parley's own store (its rows come back while its commit flushes), the model asked
 * with the history it read (the body Parley sends), the first token written once both it and the commit are in,
 * the rest of the reply, then the turn's closing statement and the final line. The baseline of the `ttft` benchmark
 * for what Parley adds of its own (framework, authentication, validation, its turn's objects, the token's path).
 * Environment: DATABASE_URL (PostgreSQL) or DATA_DIR (PGlite), FAKE_PORT; the thread by the runner's "thread" call.
 */
import { randomUUID } from "node:crypto";
import { createServer, request, Agent, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { openPglite } from "../../src/store/pglite-db.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { SseParser } from "../../src/providers/llm/sse.js";
import { closeTurnStatement, openTurnStatement, type TurnIds } from "./chat-sql.js";
import { serveParent } from "./children.js";

const systemPrompt = "You are a helpful assistant.\n\nThe user's timezone is UTC; their local time is Friday.";

const databaseUrl = process.env.DATABASE_URL;
const db = databaseUrl ? openPostgres(databaseUrl, 5) : await openPglite(process.env.DATA_DIR ?? "");
const fakePort = Number(process.env.FAKE_PORT);
const modelAgent = new Agent({ keepAlive: true });
let thread: TurnIds | undefined;

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    incoming.setEncoding("utf8");
    incoming.on("data", (chunk: string) => (text += chunk));
    incoming.on("end", () => resolve(text));
    incoming.on("error", reject);
  });
}

/** The model's streamed reply: its content deltas as they come, through `onDelta`; resolves with the whole text. */
function askModel(history: { role: string; content: string }[], onDelta: (text: string) => void): Promise<string> {
  const payload = JSON.stringify({ model: "fake-model", messages: [{ role: "system", content: systemPrompt }, ...history], temperature: 0.7, max_tokens: 1024, stream: true });
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: "127.0.0.1", port: fakePort, path: "/v1/chat/completions", method: "POST", agent: modelAgent, headers: { authorization: "Bearer sk-bench-0123456789", "content-type": "application/json", accept: "text/event-stream", "content-length": Buffer.byteLength(payload) } },
      (response) => {
        const parser = new SseParser();
        let whole = "";
        response.on("data", (chunk: Buffer) => {
          for (const { data } of parser.push(chunk)) {
            if (data === "[DONE]") continue;
            const content = (JSON.parse(data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta?.content;
            if (content) {
              whole += content;
              onDelta(content);
            }
          }
        });
        response.on("end", () => resolve(whole));
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

async function chat(incoming: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = JSON.parse(await readBody(incoming)) as { message: string };
  if (!thread) throw new Error("no thread set");
  const ids = thread;
  const lease = databaseUrl ? [randomUUID(), 0, 30] : [null, null, null];
  const params = [ids.threadId, ids.projectId, false, randomUUID(), body.message, JSON.stringify({ user_type: "user" }), 41, ...lease];
  const { rows, committed } = await db.queryCommittingLater<{ conversation_id: number; history: { role: string; content: string }[] }>(openTurnStatement, params);
  const [opened] = rows;
  if (!opened) throw new Error("parley_open_turn returned no row");
  let held: string[] | undefined = [];
  let index = 0;
  const write = (token: string) => response.write(`${JSON.stringify({ token, index: index++ })}\n`);
  response.writeHead(200, { "content-type": "application/x-ndjson", "x-request-id": randomUUID(), "access-control-allow-origin": "*" });
  const durable = committed.then(() => {
    for (const token of held ?? []) write(token);
    held = undefined;
  });
  const text = await askModel(opened.history, (token) => (held ? held.push(token) : write(token)));
  await durable;
  const replyId = randomUUID();
  await db.query(closeTurnStatement, [ids.threadId, opened.conversation_id, replyId, text, JSON.stringify({ provider: "openai" }), "0.002", lease[0]]);
  response.end(`${JSON.stringify({ message: text, extras: { user_message_id: params[3], conversation_id: opened.conversation_id, reply_message_id: replyId } })}\n`);
}

const server = createServer((incoming, response) => {
  chat(incoming, response).catch((error: unknown) => {
    if (!response.headersSent) response.writeHead(500);
    response.end(String(error));
  });
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

serveParent(
  { port: (server.address() as AddressInfo).port },
  {
    thread: (payload) => {
      thread = payload as TurnIds;
    },
  },
  async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    modelAgent.destroy();
    await db.close();
  },
);
