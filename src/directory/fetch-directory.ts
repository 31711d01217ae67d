/**
 * The directory feed behind `--directory-url`: one GET (ETag / If-None-Match, timeouts, no redirects,
 * credentials as Basic authentication, src/reload's openUrl) streamed into a private temp file, so that the
 * downloaded bytes go through the very loader, limits and completeness rule of a directory file. A body sent
 * with `Content-Encoding: gzip`, or a gzip file itself (it starts with the gzip magic bytes, which no JSON
 * text does), is inflated on the way; the wire bytes and the written bytes are each capped. The temp files
 * live in a private folder (0700, files 0600) that close() removes, and each is removed once loaded.
 */
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { codeOf, messageOf } from "../errors/caught.js";
import { FetchError, NOT_MODIFIED, byteCap, openUrl, redactUrls, type LoadContext } from "../reload/index.js";

export interface FeedOptions {
  /** Cap on the bytes on the wire and on the inflated feed. */
  maxBytes: number;
  /** Bound on one download, body included. */
  timeoutMs: number;
  /** Longest wait for the next bytes. */
  idleTimeoutMs: number;
}

/** A downloaded feed in its temp file: load it, then remove() it. */
interface Download {
  file: string;
  etag: string | undefined;
  httpCode: number;
  remove(): Promise<void>;
}

/** Inflated bytes per step (zlib's default of 16 KiB makes a 100 MB feed 6,000 steps). */
const INFLATE_CHUNK = 256 * 1024;

/** The bytes of `source`, inflated when they start with the gzip magic bytes (1f 8b), as they are otherwise. */
async function* inflateIfGzip(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const it = source[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < 2 && !ended) {
    const r = await it.next();
    if (r.done) ended = true;
    else head = Buffer.concat([head, r.value]);
  }
  async function* all(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    while (!ended) {
      const r = await it.next();
      if (r.done) return;
      yield r.value;
    }
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* all();
    return;
  }
  const gunzip = createGunzip({ chunkSize: INFLATE_CHUNK });
  const feeding = pipeline(all(), gunzip);
  feeding.catch(() => undefined); // its error also destroys gunzip, which the loop below throws
  try {
    yield* gunzip as AsyncIterable<Buffer>;
    await feeding;
  } finally {
    gunzip.destroy();
  }
}

export class DirectoryFeed {
  /** The URL as shown (userinfo and query values redacted). */
  readonly shown: string;
  private dir: string | undefined;
  private serial = 0;
  private readonly aborter = new AbortController();
  private closed = false;
  private etag: string | undefined;
  private readonly etags = new WeakMap<object, string | undefined>();

  constructor(
    private readonly url: string,
    private readonly o: FeedOptions,
  ) {
    this.shown = redactUrls(url);
  }

  /** The private folder for the downloads, made on first use. */
  private folder(): string {
    this.dir ??= mkdtempSync(join(tmpdir(), "portier-directory-"));
    return this.dir;
  }

  /**
   * Downloads the feed unless it still has `etag` (then "not modified"); the file keeps the feed's name
   * (users.ndjson, or users.ndjson for users.ndjson.gz) so that the loader's messages name it.
   */
  private async download(
    etag: string | undefined,
    onHttpCode: (code: number) => void,
  ): Promise<Download | "not modified"> {
    if (this.closed) throw new FetchError(`GET ${this.shown}: the directory source is closed`);
    const max = this.o.maxBytes;
    const opened = await openUrl(this.url, {
      etag,
      timeoutMs: this.o.timeoutMs,
      idleTimeoutMs: this.o.idleTimeoutMs,
      maxBytes: max,
      accept: "application/x-ndjson, application/json, application/gzip",
      signal: this.aborter.signal,
    });
    onHttpCode(opened.httpCode);
    if (opened.status === 304) return "not modified";
    const name =
      (new URL(this.url).pathname.split("/").pop() ?? "").replace(/\.gz$/, "").replace(/[^\w.-]/g, "_") || "directory";
    const file = join(this.folder(), `${++this.serial}-${name}`);
    const remove = () => rm(file, { force: true });
    const tooLarge = () =>
      new FetchError(
        `GET ${this.shown}: the directory is larger than the limit of ${max} bytes once inflated ` +
          `(--directory-max-bytes)`,
        opened.httpCode,
      );
    try {
      // "wx": a new file, never one put there by someone else; 0600 in a 0700 folder.
      await pipeline(
        opened.body,
        inflateIfGzip,
        byteCap(max, tooLarge),
        createWriteStream(file, { flags: "wx", mode: 0o600 }),
      );
    } catch (err) {
      opened.body.destroy();
      await remove();
      if (err instanceof FetchError) throw err;
      const code = codeOf(err);
      if (code?.startsWith("Z_"))
        throw new FetchError(`GET ${this.shown}: the gzip body is corrupt (${messageOf(err)})`, opened.httpCode);
      throw new FetchError(
        `GET ${this.shown}: cannot write the download to ${this.folder()} (${code ?? messageOf(err)})`,
        opened.httpCode,
      );
    }
    return { file, etag: opened.etag, httpCode: opened.httpCode, remove };
  }

  /**
   * One poll: not modified (NOT_MODIFIED) while the server still has the accepted feed's ETag, else the feed
   * downloaded and read by `read` (the directory file loader), its temp file removed after. The loader's
   * messages (errors, refused records) name the URL as shown instead of the temp file.
   */
  async load<T extends { problems: string[] }>(
    read: (file: string) => Promise<T>,
    ctx?: LoadContext,
  ): Promise<T | typeof NOT_MODIFIED> {
    const download = await this.download(this.etag, (code) => ctx?.httpCode(code));
    if (download === "not modified") return NOT_MODIFIED;
    const rename = (text: string) => text.split(download.file).join(this.shown);
    try {
      const loaded = await read(download.file);
      loaded.problems = loaded.problems.map(rename);
      this.etags.set(loaded, download.etag);
      return loaded;
    } catch (err) {
      if (err instanceof Error) err.message = rename(err.message);
      throw err;
    } finally {
      await download.remove();
    }
  }

  /**
   * A loaded feed went live: its ETag is sent from now on. Only then: a refused feed keeps no ETag, so the
   * next poll fetches it again instead of calling it unchanged.
   */
  activated(loaded: object): void {
    this.etag = this.etags.get(loaded);
  }

  /** Aborts a download under way and removes the private folder with whatever is in it. */
  close(): void {
    this.closed = true;
    this.aborter.abort();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}
