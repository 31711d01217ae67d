/**
 * The POST /decide body, single or batch, validated with ajv; errors name the field.
 */
import { Ajv, type ErrorObject } from "ajv";

export interface DecideBody {
  method: string;
  path: string;
  token?: string;
  headers?: Record<string, string>;
}

export const MAX_BATCH = 100;

/** One decision request; docs/openapi.json carries the same schema (a test keeps them equal). */
export const DECIDE_REQUEST_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["method", "path"],
  properties: {
    method: { type: "string", pattern: "^[A-Za-z]{1,16}$" },
    path: { type: "string", minLength: 1, maxLength: 4096 },
    // No length cap on the token here: its size is the end client's doing, so the verifier answers it as
    // a decision (401 token_too_large) like every other adapter; the body cap bounds the whole body.
    token: { type: "string" },
    headers: { type: "object", additionalProperties: { type: "string" }, maxProperties: 64 },
  },
} as const;

const ajv = new Ajv({ allErrors: false });
const validateSingle = ajv.compile<DecideBody>(DECIDE_REQUEST_SCHEMA);
const validateBatch = ajv.compile<{ requests: DecideBody[] }>({
  type: "object",
  additionalProperties: false,
  required: ["requests"],
  properties: { requests: { type: "array", minItems: 1, maxItems: MAX_BATCH, items: DECIDE_REQUEST_SCHEMA } },
});

/** ajv's first error as one line naming the field of the body (body.requests.2.path: is required). */
export function describe(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return "body: is invalid";
  const at = `body${e.instancePath.replace(/\//g, ".")}`;
  if (e.keyword === "required")
    return `${at}.${(e.params as { missingProperty: string }).missingProperty}: is required`;
  if (e.keyword === "additionalProperties")
    return `${at}.${(e.params as { additionalProperty: string }).additionalProperty}: is not allowed`;
  if (e.keyword === "enum")
    return `${at}: must be one of ${(e.params as { allowedValues: string[] }).allowedValues.join(", ")}`;
  return `${at}: ${e.message ?? "is invalid"}`;
}

export type ParsedBody =
  | { ok: true; batch: false; request: DecideBody }
  | { ok: true; batch: true; requests: DecideBody[] }
  | { ok: false; error: string };

/**
 * `headers` with two spellings of authorization (e.g. "Authorization" and "authorization"): which one counts is
 * unclear.
 */
function duplicateAuthorization(request: DecideBody, at: string): string | undefined {
  const names = Object.keys(request.headers ?? {}).filter((n) => n.toLowerCase() === "authorization");
  return names.length > 1 ? `${at}.headers: more than one authorization header (${names.join(", ")})` : undefined;
}

export function parseDecideBody(body: unknown): ParsedBody {
  if (typeof body === "object" && body !== null && !Array.isArray(body) && "requests" in body) {
    if (!validateBatch(body)) return { ok: false, error: describe(validateBatch.errors) };
    for (const [i, r] of body.requests.entries()) {
      const error = duplicateAuthorization(r, `body.requests.${i}`);
      if (error) return { ok: false, error };
    }
    return { ok: true, batch: true, requests: body.requests };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, error: "body: must be a JSON object" };
  if (!validateSingle(body)) return { ok: false, error: describe(validateSingle.errors) };
  const error = duplicateAuthorization(body, "body");
  return error ? { ok: false, error } : { ok: true, batch: false, request: body };
}
