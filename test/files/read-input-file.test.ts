/**
 * A file a user names is read only when it is a regular file, and never past its bound: a device that never ends
 * (/dev/zero), a FIFO nobody writes to, a folder are refused by name without waiting; a link counts as its target;
 * a file whose size says nothing (/proc) is still cut at the bound. The same table for the two ways to read.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InputFileError, openInputFile, readInputFile, readInputFileSync } from "../../src/files/read-input-file.js";
import { tempDir } from "../service/helpers.js";

const dir = tempDir();
const file = join(dir, "token");
writeFileSync(file, "0123456789");
const link = join(dir, "link");
symlinkSync(file, link);
const fifo = join(dir, "fifo");
execFileSync("mkfifo", [fifo]);
const folder = join(dir, "folder");
mkdirSync(folder);

const READERS = [
  { way: "readInputFile", read: readInputFile },
  { way: "readInputFileSync", read: async (f: string, max: number) => readInputFileSync(f, max) },
];

const REFUSED: { name: string; path: string; max: number; code: string; message: string }[] = [
  {
    name: "a character device that never ends",
    path: "/dev/zero",
    max: 1024,
    code: "file_not_regular",
    message: "/dev/zero: not a regular file (a character device)",
  },
  {
    name: "a FIFO with no writer",
    path: fifo,
    max: 1024,
    code: "file_not_regular",
    message: `${fifo}: not a regular file (a FIFO)`,
  },
  {
    name: "a folder",
    path: folder,
    max: 1024,
    code: "file_not_regular",
    message: `${folder}: not a regular file (a folder)`,
  },
  {
    name: "a file one byte over the bound",
    path: file,
    max: 9,
    code: "file_too_large",
    message: `${file}: larger than 9 bytes, the limit`,
  },
  {
    name: "a /proc file (size 0) whose content passes the bound",
    path: "/proc/self/status",
    max: 16,
    code: "file_too_large",
    message: "/proc/self/status: larger than 16 bytes, the limit",
  },
];

describe.each(READERS)("$way", ({ read }) => {
  it.each([
    { name: "a regular file", path: file, max: 1024 },
    { name: "a file exactly at the bound", path: file, max: 10 },
    { name: "a link to a regular file (as Kubernetes mounts a Secret)", path: link, max: 1024 },
  ])("reads $name", async ({ path, max }) => {
    expect((await read(path, max)).toString()).toBe("0123456789");
  });

  it("reads a file whose size says 0 (/proc) to its end, within the bound", async () => {
    const text = (await read("/proc/self/status", 1024 * 1024)).toString();
    expect(text).toMatch(/^Name:/);
    expect(text).toMatch(/\nPid:\s+\d+\n/);
  });

  it.each(REFUSED)("refuses $name, naming it", async ({ path, max, code, message }) => {
    const err = await read(path, max).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputFileError);
    expect((err as InputFileError).code).toBe(code);
    expect((err as Error).message).toBe(message);
    expect((err as InputFileError).why).toBe(message.slice(path.length + 2));
  });

  it("throws the system's error for a missing file (the caller words it)", async () => {
    const err = await read(join(dir, "none"), 1024).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(InputFileError);
    expect((err as NodeJS.ErrnoException).code).toBe("ENOENT");
  });
});

describe("openInputFile", () => {
  it("hands a regular file's handle and size to a caller that reads it its own way", async () => {
    const { handle, stats } = await openInputFile(link);
    try {
      expect(stats.size).toBe(10);
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(4), 0, 4, 0);
      expect(buffer.subarray(0, bytesRead).toString()).toBe("0123");
    } finally {
      await handle.close();
    }
  });

  it("refuses a FIFO without waiting for a writer", async () => {
    await expect(openInputFile(fifo)).rejects.toThrow(`${fifo}: not a regular file (a FIFO)`);
  });
});
