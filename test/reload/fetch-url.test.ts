/**
 * fetchUrl: ETag round trip, userinfo sent as Basic authentication (never left in the URL or shown), the
 * body cap refusing as soon as it is passed, a gzip-encoded body inflated with the wire and inflated sizes
 * capped apart, and errors that carry the HTTP code but no secret.
 */
import { afterEach, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { fetchUrl, FetchError } from "../../src/reload/index.js";
import { localServers } from "../support/local-servers.js";

const servers = localServers();
afterEach(() => servers.closeAll());
const serve = servers.serve;

const opts = { timeoutMs: 2000, maxBytes: 1024 };

describe("fetchUrl", () => {
  it("sends If-None-Match and answers 304 as not modified", async () => {
    const host = await serve((req, res) =>
      req.headers["if-none-match"] === '"v1"'
        ? res.writeHead(304).end()
        : res.writeHead(200, { etag: '"v1"' }).end("hello"),
    );
    const first = await fetchUrl(`http://${host}/b`, opts);
    expect(first).toMatchObject({ status: 200, etag: '"v1"' });
    expect(await fetchUrl(`http://${host}/b`, { ...opts, etag: '"v1"' })).toEqual({ status: 304, httpCode: 304 });
  });

  it("turns userinfo into Basic authentication and keeps it out of errors", async () => {
    const seen: (string | undefined)[] = [];
    const host = await serve((req, res) => {
      seen.push(req.headers.authorization);
      res
        .writeHead(req.headers.authorization === `Basic ${Buffer.from("ops:s3cret").toString("base64")}` ? 500 : 401)
        .end();
    });
    const err = (await fetchUrl(`http://ops:s3cret@${host}/b?X-Amz-Signature=sig`, opts).catch(
      (e: unknown) => e,
    )) as FetchError;
    expect(err).toBeInstanceOf(FetchError);
    expect(err.httpCode).toBe(500);
    expect(err.message).toBe(`GET http://***@${host}/b?X-Amz-Signature=*** answered HTTP 500`);
    expect(seen).toEqual([`Basic ${Buffer.from("ops:s3cret").toString("base64")}`]);
  });

  it("refuses a body over the cap, declared or streamed", async () => {
    const host = await serve((req, res) => {
      if (req.url === "/declared") return res.writeHead(200, { "content-length": "5000" }).end("x".repeat(5000));
      res.writeHead(200);
      const chunk = "y".repeat(512);
      const write = (n: number): void =>
        void (n > 0 && res.write(chunk) ? write(n - 1) : n > 0 ? res.once("drain", () => write(n - 1)) : res.end());
      write(2000);
    });
    await expect(fetchUrl(`http://${host}/declared`, opts)).rejects.toThrow(
      /\(5000 bytes\) is larger than the limit of 1024 bytes/,
    );
    await expect(fetchUrl(`http://${host}/streamed`, opts)).rejects.toThrow(/larger than the limit of 1024 bytes/);
  });

  it("inflates Content-Encoding: gzip, capping the wire bytes and the inflated bytes apart", async () => {
    const text = "z".repeat(4000);
    const gz = gzipSync(text);
    const host = await serve((req, res) =>
      res.writeHead(200, { "content-encoding": "gzip", "content-length": String(gz.length) }).end(gz),
    );
    const got = await fetchUrl(`http://${host}/g`, { ...opts, maxInflatedBytes: 8000 });
    expect(got.status === 200 && Buffer.from(got.bytes).toString()).toBe(text);
    // Small on the wire (under maxBytes), too large once inflated.
    await expect(fetchUrl(`http://${host}/g`, opts)).rejects.toThrow(
      `GET http://${host}/g: the inflated body is larger than the limit of 1024 bytes`,
    );
    await expect(
      fetchUrl(`http://${host}/g`, { ...opts, maxBytes: gz.length - 1, maxInflatedBytes: 8000 }),
    ).rejects.toThrow(`the body (${gz.length} bytes) is larger than the limit of ${gz.length - 1} bytes`);
  });

  it("gives up after the timeout, naming it", async () => {
    const host = await serve(() => undefined);
    await expect(fetchUrl(`http://${host}/slow?token=t`, { ...opts, timeoutMs: 100 })).rejects.toThrow(
      `GET http://${host}/slow?token=*** failed: no answer within 100 ms`,
    );
  });
});
