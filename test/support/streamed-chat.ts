import { request as httpRequest } from "node:http";

/**
 * A streamed chat (`streaming: true`, project "support") over a real connection to the app listening at `httpBase`:
 * what the client has received so far, and the whole body once it ends.
 */
export function streamChat(httpBase: string, apiKey: string, threadId: string, message: string): { received: () => string; done: Promise<string> } {
  let body = "";
  const done = new Promise<string>((resolve, reject) => {
    const req = httpRequest(new URL("/chat", httpBase), { method: "POST", headers: { authorization: apiKey, "content-type": "application/json" } }, (res) => {
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve(body));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(JSON.stringify({ service_config_name: "support", thread_id: threadId, message, streaming: true }));
  });
  return { received: () => body, done };
}
