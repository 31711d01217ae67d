/**
 * `--directory-url` against a real static server, nginx (its own ETag and 304 answers): the first load, a 304
 * that reloads nothing, a feed renamed over while polled, a feed written in place (no prefix ever served),
 * gzip (dynamic, pre-compressed, a .gz file), bodies over --directory-max-bytes on the wire or inflated,
 * Basic-authentication credentials that never show in /ready, /metrics, logs or errors, and a server that is
 * down at start and comes back. Skipped with a message where nginx is not installed.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { closeSync, openSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { INSTALL_HINT } from "./harness/gateways.js";
import { sealNdjson } from "../support/directory-files.js";
import { metricValue } from "../support/metrics.js";
import { nginxMissing, startStaticNginx, type StaticNginx } from "./harness/static-nginx.js";
import {
  ISSUER,
  TENANT_A,
  decide,
  makeKeys,
  serveInProcess,
  tempDir,
  until,
  userToken,
  type InProcessService,
  type Keys,
} from "../service/helpers.js";
import { json, type ReadyJson } from "../support/answers.js";

const PATH = "/v2/ORG001/elevesJeunes/J1/absences";
const sub = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
const record = (i: number, roles: string[] = ["enseignant_jeune"]) =>
  JSON.stringify({ sub: sub(i), tenant_id: TENANT_A, roles });
/** Records 1..n, each with enseignant_jeune. */
const feed = (n: number, extra: string[] = []) =>
  sealNdjson([...Array.from({ length: n }, (_, i) => record(i + 1)), ...extra]);

const missing = nginxMissing();
if (missing) console.warn(`[e2e] nginx not found: skipping the --directory-url tests. Install: ${INSTALL_HINT.nginx}`);

describe.skipIf(missing)("--directory-url, served by nginx", () => {
  let nginx: StaticNginx;
  let keys: Keys;
  let jwks: string;
  const running: InProcessService[] = [];

  beforeAll(async () => {
    nginx = await startStaticNginx([["ops", "s3cret"]]);
    keys = await makeKeys();
    jwks = join(tempDir(), "jwks.json");
    writeFileSync(jwks, JSON.stringify(keys.jwks));
  }, 30_000);
  afterAll(async () => {
    await nginx?.close();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
  });

  async function serve(url: string, extra: string[] = []): Promise<InProcessService> {
    const svc = await serveInProcess([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--directory-url",
      url,
      "--directory-poll-seconds",
      "0.1",
      ...extra,
    ]);
    running.push(svc);
    return svc;
  }
  const ready = async (svc: InProcessService) => json<ReadyJson>(await fetch(`${svc.url}/ready`));
  const metrics = async (svc: InProcessService) => (await fetch(`${svc.url}/metrics`)).text();
  const allowed = async (svc: InProcessService, i: number) =>
    (await decide(svc.url, { method: "GET", path: PATH, token: await userToken(keys, sub(i)) })).json.allow;
  /** Writes beside and renames over: the server never sees a partial file. */
  const publish = (name: string, text: string | Buffer) => {
    const file = join(nginx.www, name);
    writeFileSync(`${file}.tmp`, text);
    renameSync(`${file}.tmp`, file);
  };

  it("loads the feed, answers 304 without reloading, and takes a feed renamed over while polled", async () => {
    publish("users.ndjson", feed(4));
    const svc = await serve(`${nginx.url}/users.ndjson`);
    let r = await ready(svc);
    expect(r.ready).toBe(true);
    expect(r.directory).toMatchObject({ source: `${nginx.url}/users.ndjson`, loaded: true, size: 4, reloads: 0 });
    expect(nginx.requests()).toContain('200 "-" "-" /users.ndjson');
    expect(r.directory.file).toBeUndefined();
    expect(await allowed(svc, 1)).toBe(true);

    // Unchanged: nginx answers 304 to If-None-Match, and nothing is reloaded.
    await until(() => nginx.requests().some((l) => l.startsWith('304 "-" "\\x22') && l.endsWith("/users.ndjson")));
    await until(async () => (await ready(svc)).directory.lastHttpCode === 304);
    r = await ready(svc);
    expect(r.directory).toMatchObject({ reloads: 0, reloadFailures: 0, size: 4 });
    expect(r.directory.successfulRequests).toBeGreaterThan(1);

    // Replaced by rename while polled: user 1 loses the role, user 5 comes.
    publish("users.ndjson", sealNdjson([record(1, []), record(2), record(3), record(4), record(5)]));
    await until(async () => (await ready(svc)).directory.reloads === 1);
    expect(await allowed(svc, 1)).toBe(false);
    expect(await allowed(svc, 5)).toBe(true);
    expect((await ready(svc)).directory.size).toBe(5);
    expect(await metrics(svc)).toMatch(/portier_directory_size 5\n[\s\S]*portier_directory_last_load_failed 0/);
  }, 60_000);

  it("never serves a prefix of a feed written in place (issue 17 item 2 through a server)", async () => {
    // The old feed gives S no role; the new one gives S enseignant_jeune on line 2 and takes it back on line 19.
    const S = 99;
    const others = Array.from({ length: 20 }, (_, i) => record(i + 1));
    const file = join(nginx.www, "inplace.ndjson");
    writeFileSync(file, sealNdjson(others));
    const svc = await serve(`${nginx.url}/inplace.ndjson`);
    expect((await ready(svc)).directory).toMatchObject({ loaded: true, size: 20 });

    let allows = 0;
    let probing = true;
    const probe = (async () => {
      for (let n = 0; probing && n < 5000; n++) {
        if (await allowed(svc, S).catch(() => false)) allows++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      const lines = [record(1), record(S), ...others.slice(1, 17), record(S, []), ...others.slice(17)];
      const sealed = sealNdjson(lines);
      const endAt = sealed.lastIndexOf('{"portier_end"');
      const lineEnd = (n: number) => sealed.split("\n").slice(0, n).join("\n").length + 1;
      const fd = openSync(file, "w"); // truncates: the writer rewrites the file in place
      try {
        let written = 0;
        // Stops where the file on the server is a prefix: S holds the role after line 12; every record but no end
        // record.
        for (const upTo of [lineEnd(12), endAt]) {
          written += writeSync(fd, sealed.slice(written, upTo));
          const failures = (await ready(svc)).directory.reloadFailures;
          // Two refused polls after the write: at least one read the whole prefix as the server had it.
          await until(async () => (await ready(svc)).directory.reloadFailures >= failures + 2, 30_000);
          const r = await ready(svc);
          expect(r.directory).toMatchObject({ size: 20, reloads: 0 });
          expect(r.problems.join()).toMatch(
            /directory: last reload refused, previous index keeps serving: .*inplace\.ndjson/,
          );
        }
        writeSync(fd, sealed.slice(written));
      } finally {
        closeSync(fd);
      }
      await until(async () => (await ready(svc)).directory.reloads === 1, 30_000);
    } finally {
      probing = false;
      await probe;
    }
    expect(allows).toBe(0);
    expect(await allowed(svc, S)).toBe(false);
    expect((await ready(svc)).directory).toMatchObject({ size: 21, loaded: true });
    expect((await ready(svc)).directory.lastError).toBeUndefined();
  }, 120_000);

  it.each([
    [
      "nginx gzip on (Content-Encoding: gzip, weak ETag)",
      "gz/users.ndjson",
      (text: string) => [["gz/users.ndjson", text]] as const,
      "gzip",
    ],
    [
      "a pre-compressed file (gzip_static)",
      "static/users.ndjson",
      (text: string) => [["static/users.ndjson.gz", gzipSync(text)]] as const,
      "gzip",
    ],
    [
      "a .gz file (a gzip body, no Content-Encoding)",
      "users.ndjson.gz",
      (text: string) => [["users.ndjson.gz", gzipSync(text)]] as const,
      "-",
    ],
  ])(
    "inflates %s and then answers 304",
    async (_name, path, files, encoding) => {
      const text = feed(300);
      for (const [name, body] of files(text)) publish(name, body);
      const svc = await serve(`${nginx.url}/${path}`);
      expect((await ready(svc)).directory).toMatchObject({ loaded: true, size: 300 });
      expect(await allowed(svc, 300)).toBe(true);
      const uri = `/${path}`;
      expect(
        nginx.requests().filter((l) => l.endsWith(uri)),
        nginx.requests().join("\n"),
      ).toContain(`200 "${encoding}" "-" ${uri}`);
      await until(async () => (await ready(svc)).directory.lastHttpCode === 304);
      expect((await ready(svc)).directory).toMatchObject({ reloads: 0, reloadFailures: 0 });
    },
    60_000,
  );

  it.each([
    [
      "a body over the cap",
      "big.ndjson",
      () => feed(40),
      /GET http:\/\/127\.0\.0\.1:\d+\/big\.ndjson: the body \(\d+ bytes\) is larger than the limit of 1024 bytes/,
    ],
    [
      "a .gz that inflates past the cap",
      "bomb.ndjson.gz",
      () => gzipSync(feed(1, [" ".repeat(200_000)])),
      new RegExp(
        String.raw`GET http:\/\/127\.0\.0\.1:\d+\/bomb\.ndjson\.gz: the directory is larger than the ` +
          String.raw`limit of 1024 bytes once ` +
          String.raw`inflated \(--directory-max-bytes\)`,
      ),
    ],
    [
      "a gzip-encoded body that inflates past the cap",
      "static/bomb.ndjson",
      () => null,
      /GET http:\/\/127\.0\.0\.1:\d+\/static\/bomb\.ndjson: the inflated body is larger than the limit of 1024 bytes/,
    ],
  ])(
    "refuses %s (--directory-max-bytes); the service starts, not ready",
    async (_name, path, body, error) => {
      const bytes = body();
      if (bytes === null) publish(`${path}.gz`, gzipSync(feed(1, [" ".repeat(200_000)])));
      else publish(path, bytes);
      const svc = await serve(`${nginx.url}/${path}`, ["--directory-max-bytes", "1024"]);
      const res = await fetch(`${svc.url}/ready`);
      expect(res.status).toBe(503);
      const r = await json<ReadyJson>(res);
      expect(r.missing).toContain("directory: not loaded");
      expect(r.directory.lastError).toMatch(error);
      expect(r.directory.lastHttpCode).toBe(200);
      expect(metricValue(await metrics(svc), "portier_directory_last_load_failed")).toBe(1);
    },
    60_000,
  );

  it("sends URL credentials as Basic authentication and never shows them", async () => {
    const lines = [record(1), record(2), JSON.stringify({ sub: sub(3), roles: ["enseignant_jeune"] }), record(4)];
    publish("private/users.ndjson", sealNdjson(lines));
    const wrong = await serve(`http://ops:wr0ng@127.0.0.1:${nginx.port}/private/users.ndjson?sig=s1gnature`);
    const shown = `http://***@127.0.0.1:${nginx.port}/private/users.ndjson?sig=***`;
    let r = await ready(wrong);
    expect(r.directory).toMatchObject({
      source: shown,
      loaded: false,
      lastHttpCode: 401,
      lastError: `GET ${shown} answered HTTP 401`,
    });

    const svc = await serve(`http://ops:s3cret@127.0.0.1:${nginx.port}/private/users.ndjson?sig=s1gnature`);
    r = await ready(svc);
    expect(r.directory).toMatchObject({ source: shown, loaded: true, size: 3 });
    expect(await allowed(svc, 4)).toBe(true);
    // The refused record is reported with the feed's URL as shown, never the temp file it was read from.
    await until(() => svc.output().includes('"event":"directory_record_rejected"'));
    expect(svc.output()).toContain(`${shown} line 3: tenant_id must be a non-empty string`);
    expect(svc.output()).not.toContain("portier-directory-");
    for (const s of [wrong, svc]) {
      const texts = [JSON.stringify(await ready(s)), await metrics(s), s.output()];
      for (const text of texts)
        for (const secret of ["s3cret", "wr0ng", "s1gnature", "ops:"]) expect(text).not.toContain(secret);
    }
  }, 60_000);

  it("starts not ready while the server is down, polls with back-off, and loads once it is back", async () => {
    publish("later.ndjson", feed(3));
    await nginx.stop();
    try {
      const svc = await serve(`${nginx.url}/later.ndjson`, ["--directory-poll-seconds", "0.2"]);
      const res = await fetch(`${svc.url}/ready`);
      expect(res.status).toBe(503);
      const r = await json<ReadyJson>(res);
      expect(r.missing).toContain("directory: not loaded");
      expect(r.directory.lastError).toBe(`GET ${nginx.url}/later.ndjson failed: ECONNREFUSED`);
      expect(await allowed(svc, 1)).toBe(false);
      await until(async () => (await ready(svc)).directory.reloadFailures >= 2);
      await nginx.start();
      // Back-off doubles the wait after each failure: allow for a few of them.
      await until(async () => (await fetch(`${svc.url}/ready`)).status === 200, 30_000);
      expect((await ready(svc)).directory).toMatchObject({ loaded: true, size: 3 });
      expect(await allowed(svc, 1)).toBe(true);
    } finally {
      await nginx.start(); // for the cases after this one, whatever happened
    }
  }, 60_000);
});
