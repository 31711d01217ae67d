/**
 * What a `catch` clause may read of the value it caught, which TypeScript types as `unknown` (anything can be
 * thrown): its message and its Node.js error code, without asserting that it is an Error.
 */
import { PortierError } from "./portier-error.js";

/** The message of an Error; any other thrown value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Why a file could not be read, in words, never a raw system code alone: "not found: PATH" for a missing one
 * (also a missing folder on the way), "PATH: is a folder, not a file", else "PATH: cannot read (EACCES)". A
 * Portier error is already in words (the file reader's "PATH: not a regular file (a FIFO)"): its message.
 */
export function unreadable(file: string, err: unknown): string {
  if (err instanceof PortierError) return err.message;
  const code = codeOf(err);
  if (code === "ENOENT" || code === "ENOTDIR") return `not found: ${file}`;
  if (code === "EISDIR") return `${file}: is a folder, not a file`;
  return `${file}: cannot read (${code ?? messageOf(err)})`;
}

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, ...), when the value carries a string one. */
export function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}
