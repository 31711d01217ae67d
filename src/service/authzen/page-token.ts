/**
 * The search APIs' pagination token: opaque to the PEP, base64url of the position to continue from and a digest of
 * the query it continues (the searched kind, subject, action, resource, context and the page's limit and
 * properties). A continued request whose query differs is refused (400), as the spec asks; so is a token that is not
 * one of ours. Not signed: a forged position only asks for another page of the same query, which the PEP may ask
 * anyway, and every worker of a cluster reads every other's tokens.
 */
import { createHash } from "node:crypto";

/** JSON with object keys sorted, so that the same query digests the same whatever its member order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

export function queryDigest(query: unknown): string {
  return createHash("sha256").update(canonical(query)).digest("base64url").slice(0, 22);
}

export function pageToken(digest: string, position: number): string {
  return Buffer.from(JSON.stringify({ q: digest, p: position })).toString("base64url");
}

/** The position a token continues from, or why it cannot be used. */
export function readPageToken(
  token: string,
  digest: string,
): { ok: true; position: number } | { ok: false; error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const t = typeof parsed === "object" && parsed !== null ? (parsed as { q?: unknown; p?: unknown }) : {};
  if (typeof t.q !== "string" || typeof t.p !== "number" || !Number.isSafeInteger(t.p) || t.p < 0)
    return { ok: false, error: "body.page.token: is not a next_token this service gave" };
  if (t.q !== digest)
    return {
      ok: false,
      error:
        "body.page.token: the query changed since this token was given; subject, action, resource, context and " +
        "page.limit must stay as in the first request (start again without a token for a new query)",
    };
  return { ok: true, position: t.p };
}
