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

const single = {
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
const validateSingle = ajv.compile<DecideBody>(single);
const validateBatch = ajv.compile<{ requests: DecideBody[] }>({
  type: "object",
  additionalProperties: false,
  required: ["requests"],
  properties: { requests: { type: "array", minItems: 1, maxItems: MAX_BATCH, items: single } },
});

function describe(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return "body: is invalid";
  const at = `body${e.instancePath.replace(/\//g, ".")}`;
  if (e.keyword === "required") return `${at}.${(e.params as { missingProperty: string }).missingProperty}: is required`;
  if (e.keyword === "additionalProperties") return `${at}.${(e.params as { additionalProperty: string }).additionalProperty}: is not allowed`;
  return `${at}: ${e.message ?? "is invalid"}`;
}

export type ParsedBody = { ok: true; batch: false; request: DecideBody } | { ok: true; batch: true; requests: DecideBody[] } | { ok: false; error: string };

export function parseDecideBody(body: unknown): ParsedBody {
  if (typeof body === "object" && body !== null && !Array.isArray(body) && "requests" in body) {
    return validateBatch(body) ? { ok: true, batch: true, requests: body.requests } : { ok: false, error: describe(validateBatch.errors) };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, error: "body: must be a JSON object" };
  return validateSingle(body) ? { ok: true, batch: false, request: body } : { ok: false, error: describe(validateSingle.errors) };
}
