/**
 * DirectoryFeed (the download behind --directory-url), on a local HTTP server for the shapes nginx does not make:
 * the private temp folder (0700) and file (0600), removed after the load and on close; a body cut short of its
 * Content-Length; a corrupt gzip; the ETag sent only after a load went live; the loader's messages naming the URL.
 */
import { afterEach, describe, expect, it } from "vitest";
import { readdirSync, statSync, existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname } from "node:path";
import { gzipSync } from "node:zlib";
import { DirectoryFeed } from "../../src/directory/fetch-directory.js";
import { NOT_MODIFIED } from "../../src/reload/index.js";
import { localServers } from "../support/local-servers.js";

const servers = localServers();
const feeds: DirectoryFeed[] = [];
afterEach(async () => {
  for (const f of feeds.splice(0)) f.close();
  await servers.closeAll();
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  return `http://${await servers.serve(handler)}`;
}

function feedOf(url: string, maxBytes = 1 << 20): DirectoryFeed {
  const feed = new DirectoryFeed(url, { maxBytes, timeoutMs: 5000, idleTimeoutMs: 2000 });
  feeds.push(feed);
  return feed;
}

const TEXT = '{"sub":"a"}\n{"sub":"b"}\n';

describe("DirectoryFeed", () => {
  it(
    "downloads into a private file (0600 in a 0700 " + "folder), removes it after the load, and the folder on close",
    async () => {
      const base = await serve((_req, res) => res.writeHead(200).end(TEXT));
      const feed = feedOf(`${base}/users.ndjson`);
      let seen: { file: string; mode: number; dirMode: number; text: string } | undefined;
      const loaded = await feed.load(async (file) => {
        const { readFile } = await import("node:fs/promises");
        seen = {
          file,
          mode: statSync(file).mode & 0o777,
          dirMode: statSync(dirname(file)).mode & 0o777,
          text: await readFile(file, "utf8"),
        };
        return { problems: [] as string[] };
      });
      expect(loaded).toEqual({ problems: [] });
      expect(seen).toMatchObject({ mode: 0o600, dirMode: 0o700, text: TEXT });
      expect(seen!.file).toMatch(/users\.ndjson$/);
      expect(existsSync(seen!.file)).toBe(false);
      expect(readdirSync(dirname(seen!.file))).toEqual([]);
      feed.close();
      expect(existsSync(dirname(seen!.file))).toBe(false);
    },
  );

  it(
    "sends the ETag of a load only once it went live, " + "and names the URL (redacted) instead of the temp file",
    async () => {
      const etags: (string | undefined)[] = [];
      const base = await serve((req, res) => {
        etags.push(req.headers["if-none-match"]);
        if (req.headers["if-none-match"] === '"v1"') return res.writeHead(304).end();
        res.writeHead(200, { etag: '"v1"' }).end(TEXT);
      });
      const feed = feedOf(`http://user:pw@${base.slice("http://".length)}/users.ndjson?sig=x`);
      const shown = `http://***@${base.slice("http://".length)}/users.ndjson?sig=***`;
      const read = async (file: string) => ({ problems: [`${file} line 1: unknown role "x"`] });
      const first = await feed.load(read);
      expect(first).toEqual({ problems: [`${shown} line 1: unknown role "x"`] });
      await feed.load(read); // not activated (refused, say): no ETag yet, fetched again
      feed.activated(first as object);
      expect(await feed.load(read)).toBe(NOT_MODIFIED);
      expect(etags).toEqual([undefined, undefined, '"v1"']);
    },
  );

  it("refuses a body cut short of its Content-Length, and a corrupt gzip; removes what was written", async () => {
    const gz = gzipSync(Buffer.from(TEXT.repeat(100)));
    const base = await serve((req, res) => {
      if (req.url === "/short") {
        res.writeHead(200, { "content-length": "1000" });
        res.write(TEXT);
        setTimeout(() => res.destroy(), 50);
        return;
      }
      const corrupt = Buffer.from(gz);
      corrupt.fill(0x41, 20, 40);
      res.writeHead(200).end(corrupt);
    });
    const never = async () => {
      throw new Error("the loader must not run");
    };
    await expect(feedOf(`${base}/short`).load(never)).rejects.toThrow(
      `GET ${base}/short failed: the connection closed before the end of the body`,
    );
    await expect(feedOf(`${base}/corrupt.gz`).load(never)).rejects.toThrow(
      new RegExp(`^GET ${base}/corrupt\\.gz: the gzip body is corrupt`),
    );
    for (const f of feeds) f.close();
  });
});
