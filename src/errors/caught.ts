/**
 * What a `catch` clause may read of the value it caught, which TypeScript types as `unknown` (anything can be
 * thrown): its message and its Node.js error code, without asserting that it is an Error.
 */

/** The message of an Error; any other thrown value as text. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, ...), when the value carries a string one. */
export function codeOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null || !("code" in err)) return undefined;
  return typeof err.code === "string" ? err.code : undefined;
}
