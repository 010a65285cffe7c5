import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.js";
import { publicBaseOf } from "../../src/http/public-base.js";
import { voiceConfig, voiceSuite, waitForCall } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("recording URLs", (h) => {
  test("a recording URL never takes its host from a Host header that is not a host[:port]", { timeout: 90_000 }, async () => {
    const shortCall = { ...voiceConfig, voice: { ...voiceConfig.voice, simulated: { script: ["Bye."], ring_ms: 10, turn_ms: 10 } } };
    const { apiKey, projectId } = await h().organization(shortCall);
    const threadId = await h().thread(apiKey);
    const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    assert.equal(created.status, 200);
    const callId = created.json<{ id: string }>().id;
    // Rendering the recording (eSpeak NG) is what takes long on a loaded machine; the test is about its URL.
    await waitForCall(h().request, apiKey, callId, (call) => call.recording_url !== null, 60_000);
    const urlWith = async (headers: Record<string, string>) =>
      (await h().request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey, ...headers } })).json<{ recording_url: string }>().recording_url;

    for (const host of ["evil.example/x?y=", "evil.example#", "user@evil.example", "evil.example:99999", "a b"]) {
      const url = await urlWith({ host });
      assert.match(url, /^\/recordings\/[^/?#]+\.wav\?expires=\d+&signature=[0-9a-f]{64}$/, `Host: ${host} gives ${url}`);
    }
    assert.match(await urlWith({ host: "parley.example:8443" }), /^http:\/\/parley\.example:8443\/recordings\//);
    assert.match(await urlWith({ host: "[::1]:8000" }), /^http:\/\/\[::1\]:8000\/recordings\//);
    assert.match(await urlWith({ host: "parley.example", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" }), /^http:\/\/parley\.example\/recordings\//, "proxy headers are not trusted by default");
  });
}, voiceSuite());

describe("the public base of links", () => {
  const request = (headers: Record<string, string>, protocol = "http") => ({ headers, protocol });

  test("PUBLIC_BASE_URL wins over every header", () => {
    const settings = { publicBaseUrl: "https://parley.example.com/base/", trustProxyHeaders: true };
    assert.equal(publicBaseOf(request({ host: "evil.example", "x-forwarded-host": "evil.example" }), settings), "https://parley.example.com/base");
  });

  test("proxy headers count only when TRUST_PROXY_HEADERS says so, and only when they are a host and a scheme", () => {
    const trusted = { publicBaseUrl: undefined, trustProxyHeaders: true };
    assert.equal(publicBaseOf(request({ host: "10.0.0.5:8000", "x-forwarded-host": "parley.example.com, inner", "x-forwarded-proto": "https,http" }), trusted), "https://parley.example.com");
    assert.equal(publicBaseOf(request({ host: "10.0.0.5:8000", "x-forwarded-host": "evil.example/x?", "x-forwarded-proto": "javascript" }), trusted), "http://10.0.0.5:8000");
    assert.equal(publicBaseOf(request({ host: "10.0.0.5:8000", "x-forwarded-host": "parley.example.com" }), { publicBaseUrl: undefined, trustProxyHeaders: false }), "http://10.0.0.5:8000");
  });

  test("without a valid host the links are relative", () => {
    assert.equal(publicBaseOf(request({}), { publicBaseUrl: undefined, trustProxyHeaders: false }), "");
    assert.equal(publicBaseOf(request({ host: "-bad-.example" }), { publicBaseUrl: undefined, trustProxyHeaders: false }), "");
  });

  test("PUBLIC_BASE_URL must be an http(s) URL, and production needs it", () => {
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: "parley.example.com" }), ConfigError);
    assert.throws(() => loadConfig({ PUBLIC_BASE_URL: "https://parley.example.com/?x=1" }), ConfigError);
    assert.throws(() => loadConfig({ NODE_ENV: "production" }), /PUBLIC_BASE_URL/);
    assert.equal(loadConfig({ NODE_ENV: "production", PUBLIC_BASE_URL: "https://parley.example.com" }).publicBaseUrl, "https://parley.example.com");
    assert.throws(() => loadConfig({ TRUST_PROXY_HEADERS: "yes please" }), ConfigError);
  });
});
