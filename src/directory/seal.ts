/**
 * Seals an NDJSON directory: appends its end record (end-record.ts) so that the loader can tell the
 * complete file from any prefix of it. The file is streamed through the loader's own record parser (so the
 * count is the one the loader will check) and hashed; it is refused when it is a JSON array (complete by
 * its own syntax), malformed, or already sealed. In place, or into a copy that is renamed into place.
 */
import { createHash } from "node:crypto";
import { appendFile, copyFile, rename, rm } from "node:fs/promises";
import { DIRECTORY_LIMITS, DirectoryLoadError, openDirectoryFile } from "./load-directory.js";
import { RecordStream, RecordSyntaxError } from "./record-stream.js";
import { endRecordLine } from "./end-record.js";

export interface SealResult {
  file: string;
  records: number;
  sha256: string;
}

/** Appends the end record to `file` (or writes a sealed copy to `out`). Throws DirectoryLoadError naming the file. */
export async function sealDirectoryFile(file: string, out?: string): Promise<SealResult> {
  const { handle } = await openDirectoryFile(file);
  const hash = createHash("sha256");
  const records = new RecordStream(file, DIRECTORY_LIMITS, () => undefined);
  let lastByte: number | undefined;
  try {
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let read = 0;
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) break;
      read += bytesRead;
      if (read > DIRECTORY_LIMITS.maxFileBytes)
        throw new DirectoryLoadError(`${file}: larger than ${DIRECTORY_LIMITS.maxFileBytes} bytes (the limit)`);
      hash.update(chunk.subarray(0, bytesRead));
      lastByte = chunk[bytesRead - 1];
      records.feed(decoder.decode(chunk.subarray(0, bytesRead), { stream: true }));
    }
    records.feed(decoder.decode());
    records.end();
  } catch (err) {
    if (err instanceof RecordSyntaxError) throw new DirectoryLoadError(err.message);
    if (err instanceof TypeError) throw new DirectoryLoadError(`${file}: not valid UTF-8`);
    throw err;
  } finally {
    await handle.close();
  }
  if (!records.isNdjson)
    throw new DirectoryLoadError(
      `${file}: a JSON array directory is complete by its own syntax and takes no end record`,
    );
  const found = records.endRecordFound;
  if (found) throw new DirectoryLoadError(`${file}:${found.line}: already sealed (it ends with an end record)`);
  // The end record starts a line of its own; the newline added before it is part of the hashed bytes.
  const newline = lastByte !== undefined && lastByte !== 10 ? "\n" : "";
  hash.update(newline);
  const sha256 = hash.digest("hex");
  const tail = `${newline}${endRecordLine(records.recordCount, sha256)}\n`;
  if (out === undefined) {
    await appendFile(file, tail);
    return { file, records: records.recordCount, sha256 };
  }
  const temp = `${out}.${process.pid}.sealing`;
  try {
    await copyFile(file, temp);
    await appendFile(temp, tail);
    await rename(temp, out);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  return { file: out, records: records.recordCount, sha256 };
}
