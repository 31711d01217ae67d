/**
 * The AuthZEN request bodies, validated with ajv: each error names the field (body.evaluations.2.resource: is
 * required), answered 400. Unknown members are ignored, as the spec's JSON binding asks; what must hold is the
 * information model's required members and their types. Bounds: string lengths here, the body's bytes in
 * read-body.ts, the batch's items by --authzen-max-batch.
 */
import { Ajv, type ValidateFunction } from "ajv";
import { describe } from "../http/decide-body.js";
import type { EvaluationRequest } from "./types.js";

const ENTITY = {
  type: "object",
  required: ["type", "id"],
  properties: {
    type: { type: "string", minLength: 1, maxLength: 256 },
    id: { type: "string", minLength: 1, maxLength: 4096 },
    properties: { type: "object" },
  },
} as const;
/** A searched entity: its type only (an id, if present, is ignored, as the spec says). */
const SEARCHED = { type: "object", required: ["type"], properties: { type: ENTITY.properties.type } } as const;
const ACTION = {
  type: "object",
  required: ["name"],
  properties: { name: { type: "string", minLength: 1, maxLength: 256 }, properties: { type: "object" } },
} as const;
const CONTEXT = { type: "object" } as const;
const PAGE = {
  type: "object",
  properties: {
    token: { type: "string", maxLength: 1024 },
    limit: { type: "integer", minimum: 0 },
    properties: { type: "object" },
  },
} as const;

/** Members a batch item may carry, each overriding the top-level default. */
const PARTS = { subject: ENTITY, action: ACTION, resource: ENTITY, context: CONTEXT } as const;

const ajv = new Ajv({ allErrors: false });

/** The request bodies as validated; docs/openapi.json carries the same schemas (a test keeps them equal). */
export const EVALUATION_REQUEST_SCHEMA = {
  type: "object",
  required: ["subject", "action", "resource"],
  properties: PARTS,
} as const;

const evaluation = ajv.compile<EvaluationRequest>(EVALUATION_REQUEST_SCHEMA);

export interface EvaluationsBody {
  subject?: EvaluationRequest["subject"];
  action?: EvaluationRequest["action"];
  resource?: EvaluationRequest["resource"];
  context?: Record<string, unknown>;
  evaluations?: Partial<EvaluationRequest>[];
  options?: { evaluations_semantic?: Semantic };
}

export const SEMANTICS = ["execute_all", "deny_on_first_deny", "permit_on_first_permit"] as const;
export type Semantic = (typeof SEMANTICS)[number];

export const EVALUATIONS_REQUEST_SCHEMA = {
  type: "object",
  properties: {
    ...PARTS,
    evaluations: { type: "array", items: { type: "object", properties: PARTS } },
    options: { type: "object", properties: { evaluations_semantic: { enum: SEMANTICS } } },
  },
} as const;

const evaluations = ajv.compile<EvaluationsBody>(EVALUATIONS_REQUEST_SCHEMA);

export interface SearchBody {
  subject: { type: string; id?: string; properties?: Record<string, unknown> };
  action?: EvaluationRequest["action"];
  resource: { type: string; id?: string; properties?: Record<string, unknown> };
  context?: Record<string, unknown>;
  page?: { token?: string; limit?: number; properties?: Record<string, unknown> };
}

export type SearchKind = "subject" | "resource" | "action";

/** Subject search: the subject's type only; resource search: the resource's; action search: no action. */
export const SEARCH_REQUEST_SCHEMAS = {
  subject: {
    type: "object",
    required: ["subject", "action", "resource"],
    properties: { subject: SEARCHED, action: ACTION, resource: ENTITY, context: CONTEXT, page: PAGE },
  },
  resource: {
    type: "object",
    required: ["subject", "action", "resource"],
    properties: { subject: ENTITY, action: ACTION, resource: SEARCHED, context: CONTEXT, page: PAGE },
  },
  action: {
    type: "object",
    required: ["subject", "resource"],
    properties: { subject: ENTITY, resource: ENTITY, context: CONTEXT, page: PAGE },
  },
} as const;

const search: Record<SearchKind, ValidateFunction<SearchBody>> = {
  subject: ajv.compile<SearchBody>(SEARCH_REQUEST_SCHEMAS.subject),
  resource: ajv.compile<SearchBody>(SEARCH_REQUEST_SCHEMAS.resource),
  action: ajv.compile<SearchBody>(SEARCH_REQUEST_SCHEMAS.action),
};

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

function check<T>(validate: ValidateFunction<T>, body: unknown): Parsed<T> {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return { ok: false, error: "body: must be a JSON object" };
  return validate(body) ? { ok: true, value: body } : { ok: false, error: describe(validate.errors) };
}

export const parseEvaluation = (body: unknown): Parsed<EvaluationRequest> => check(evaluation, body);
export const parseEvaluations = (body: unknown): Parsed<EvaluationsBody> => check(evaluations, body);
export const parseSearch = (kind: SearchKind, body: unknown): Parsed<SearchBody> => check(search[kind], body);
