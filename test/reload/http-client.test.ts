/**
 * The one HTTP client of outbound calls: a POST with its body and the URL's userinfo sent as Basic
 * authentication (never in the URL), failures named with the URL redacted and a reason without it (`why`), the
 * time limit covering the answer's body, the caller's abort, and no proxy from the environment even where Node
 * would use one (NODE_USE_ENV_PROXY with HTTP_PROXY, checked in a child process: Node reads them at start).
 */
import { afterEach, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { FetchError, httpTarget, sendRequest } from "../../src/reload/index.js";
import { freePort } from "../support/free-port.js";
import { localServers } from "../support/local-servers.js";

const servers = localServers();
afterEach(() => servers.closeAll());
const serve = servers.serve;

async function failureOf(p: Promise<unknown>): Promise<FetchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FetchError);
  return err as FetchError;
}

describe("sendRequest", () => {
  it("POSTs the body with the URL's userinfo as Basic authentication, the URL shown redacted", async () => {
    const seen: { url: string | undefined; authorization: string | undefined; body: string }[] = [];
    const host = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        seen.push({ url: req.url, authorization: req.headers.authorization, body: Buffer.concat(chunks).toString() });
        res.writeHead(202).end("taken");
      });
    });
    const target = httpTarget(`http://ops:s%3Acret@${host}/logs?sig=abc`);
    expect(target.shown).toBe(`http://***@${host}/logs?sig=***`);
    expect(target.url.href).toBe(`http://${host}/logs?sig=abc`);
    const { res } = await sendRequest(target, { method: "POST", body: Buffer.from("[1,2]"), timeoutMs: 2000 });
    res.resume();
    expect(res.statusCode).toBe(202);
    expect(seen).toEqual([
      { url: "/logs?sig=abc", authorization: `Basic ${Buffer.from("ops:s:cret").toString("base64")}`, body: "[1,2]" },
    ]);
  });

  it("names a refused connection by its code, the URL redacted, and the reason apart", async () => {
    const host = `127.0.0.1:${await freePort()}`;
    const err = await failureOf(sendRequest(`http://u:p@${host}/x?token=t`, { method: "GET", timeoutMs: 2000 }));
    expect(err.message).toBe(`GET http://***@${host}/x?token=*** failed: ECONNREFUSED`);
    expect(err.why).toBe("ECONNREFUSED");
    expect(err.code).toBe("fetch_failed");
  });

  it("bounds the whole exchange, the answer's body included", async () => {
    const host = await serve((_req, res) => res.writeHead(200).write("a first part, then nothing"));
    const { res, failure, timedOut } = await sendRequest(`http://${host}/slow`, { method: "GET", timeoutMs: 150 });
    const err = await new Promise<unknown>((resolve) => (res.on("error", resolve), res.resume()));
    expect(timedOut()).toBe(true);
    expect(failure(err).message).toBe(`GET http://${host}/slow failed: no answer within 150 ms`);
    expect(failure(err).why).toBe("no answer within 150 ms");
  });

  it("stops at the caller's abort", async () => {
    const host = await serve(() => undefined);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const err = await failureOf(
      sendRequest(`http://${host}/`, { method: "GET", timeoutMs: 5000, signal: stop.signal }),
    );
    expect(err.why).toBe("aborted");
  });

  it("refuses a URL that is not http or https", async () => {
    const err = await failureOf(sendRequest("ftp://u:p@example.test/x", { method: "GET", timeoutMs: 100 }));
    expect(err.message).toBe("GET ftp://***@example.test/x: only http and https URLs are supported");
  });

  it("goes straight to the URL when the environment names a proxy Node would use", async () => {
    const reached: string[] = [];
    const proxy = await serve((req, res) => (reached.push(`proxy ${req.url}`), res.end("proxy")));
    const host = await serve((req, res) => (reached.push(`target ${req.url}`), res.end("target")));
    const client = join(import.meta.dirname, "..", "..", "src", "reload", "index.ts");
    const script =
      `const { fetchUrl } = await import(${JSON.stringify(client)});` +
      `const r = await fetchUrl("http://${host}/b", { timeoutMs: 5000, maxBytes: 100 });` +
      "console.log(Buffer.from(r.bytes).toString());";
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      { env: { ...process.env, NODE_USE_ENV_PROXY: "1", HTTP_PROXY: `http://${proxy}`, NO_PROXY: "" } },
    );
    expect(stdout.trim()).toBe("target");
    expect(reached).toEqual(["target /b"]);
  });
});
