/**
 * The one decision function every adapter calls. The pipeline, in order:
 *
 *   | step                 | on failure                                     |
 *   |----------------------|------------------------------------------------|
 *   | extract the token    | 401 token_missing                              |
 *   | verify (src/auth)    | 401 <TokenError code>                          |
 *   | directory lookup     | roles [] / synced false (the policy decides)   |
 *   | (or roles claim)     | names resolved with the active bundle's roles  |
 *   | normalise the path   | 403 path_invalid                               |
 *   | build DecisionInput  |                                                |
 *   | engine.decide        | 403 policy_error (no policy: policy_unavailable)|
 *   | shape the answer     | adds decision_id and subject                   |
 *   | decision log line    | never the token or Authorization header        |
 *
 * Never throws: any unexpected error becomes a deny (fail closed).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { engineDeny, normalisePath, tokenFacts } from "../engine/index.js";
import type { Decision, DecisionInput, RoleCheckMode } from "../engine/types.js";
import { TokenError, wwwAuthenticate, type AccessTokenVerifier } from "../auth/index.js";
import type { Directory } from "../directory/index.js";
import type { RoleResolver } from "../directory/role-names.js";
import type { PolicyHolder } from "./policy.js";
import type { ServiceMetrics } from "./metrics.js";

export interface DecisionRequest {
  method: string;
  /** Raw path as the gateway saw it (query and encoding included). */
  path: string;
  /** The bearer token, or undefined when none was presented. */
  token: string | undefined;
  /** Set when an Authorization header was present but not a single Bearer credential. */
  authorizationInvalid?: boolean;
  /** For the decision log only (never decided on): the gateway's request id, W3C traceparent, client address. */
  trace?: RequestTrace;
}

export interface RequestTrace {
  requestId?: string;
  traceparent?: string;
  clientAddress?: string;
}

/** A raw path kept in the log when it cannot be normalised: bounded, so a huge path cannot bloat the log. */
const MAX_LOGGED_RAW_PATH = 512;

export interface Subject {
  sub?: string;
  client_id?: string;
  tenant_id?: string;
  roles: string[];
}

/** The answer never carries the decision's internal `detail` (that goes to the log line only). */
export interface DecisionAnswer extends Omit<Decision, "detail"> {
  decision_id: string;
  subject: Subject | null;
  /** Present on 401 answers: the RFC 6750 header value. */
  www_authenticate?: string;
}

export interface DecideContext {
  verifier: AccessTokenVerifier;
  policy: Pick<PolicyHolder, "engine" | "resolveRole">;
  directory: Pick<Directory, "lookup"> | undefined;
  rolesClaim: string | undefined;
  roleCheck: RoleCheckMode;
  logger: Logger;
  metrics: ServiceMetrics | undefined;
}

export type Decide = (req: DecisionRequest, adapter: string) => Promise<DecisionAnswer>;

/** `Authorization: Bearer <token>` -> the token; other schemes or shapes -> invalid. */
export function bearerToken(header: string | string[] | undefined): { token?: string; invalid?: boolean } {
  if (header === undefined) return {};
  if (Array.isArray(header)) return { invalid: true };
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  return m?.[1] ? { token: m[1] } : { invalid: true };
}

/**
 * A roles claim: a JSON array of role names, or a string holding one name or a comma-separated list.
 * Never split on spaces: spec labels have spaces ("Enseignant jeune"). Unknown names are dropped.
 */
function rolesFromClaim(value: unknown, resolve: RoleResolver): string[] | undefined {
  const list = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value : undefined;
  if (!list) return undefined;
  const ids: string[] = [];
  for (const name of list) {
    const id = typeof name === "string" ? resolve(name) : undefined;
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

export function createDecide(ctx: DecideContext): Decide {
  const { logger, metrics } = ctx;
  return async function decide(req, adapter) {
    const started = process.hrtime.bigint();
    const decision_id = randomUUID();
    const mode = ctx.roleCheck;
    let decision: Decision | undefined;
    let subject: Subject | null = null;
    let www: string | undefined;
    // Normalised up front so that the log names the path even when the token fails; checked after the token.
    const normalised = normalisePath(req.path);
    const path = normalised.ok ? normalised.path : undefined;
    let input: DecisionInput | undefined;
    let revision: string | undefined;
    try {
      let claims: Record<string, unknown> | undefined;
      try {
        if (req.authorizationInvalid) throw new TokenError("token_malformed", "the Authorization header is not a single Bearer credential");
        if (!req.token) throw new TokenError("token_missing", "no access token was presented");
        claims = (await ctx.verifier.verify(req.token)).claims;
      } catch (err) {
        if (!(err instanceof TokenError)) throw err;
        www = wwwAuthenticate(err);
        decision = engineDeny(err.code, err.message, mode, 401);
      }
      if (claims) {
        const sub = typeof claims.sub === "string" ? claims.sub : undefined;
        const tenant = typeof claims.tenant_id === "string" ? claims.tenant_id : undefined;
        let roles: string[] = [];
        let synced = false;
        if (sub !== undefined) {
          if (ctx.rolesClaim) {
            const fromClaim = rolesFromClaim(claims[ctx.rolesClaim], ctx.policy.resolveRole);
            roles = fromClaim ?? [];
            synced = fromClaim !== undefined;
          } else {
            const entry = ctx.directory?.lookup(sub);
            // A record filed under another tenant (or a token naming no tenant) is not this caller: not synced.
            if (entry && entry.tenant_id === tenant) {
              roles = entry.roles;
              synced = true;
            }
          }
        }
        subject = { ...(sub !== undefined ? { sub } : {}), ...(typeof claims.client_id === "string" ? { client_id: claims.client_id } : {}), ...(tenant !== undefined ? { tenant_id: tenant } : {}), roles };
        if (!normalised.ok) {
          decision = engineDeny("path_invalid", normalised.message, mode, 403);
        } else {
          const engine = ctx.policy.engine;
          if (!engine) {
            decision = engineDeny("policy_unavailable", "no policy is loaded", mode, 403);
          } else {
            input = { method: req.method.toUpperCase(), path: normalised.path, token: tokenFacts(claims), roles, synced, role_check: mode };
            revision = engine.revision;
            decision = await engine.decide(input);
          }
        }
      }
    } catch (err) {
      logger.error({ event: "decision_error", decision_id, error: (err as Error)?.message ?? String(err) }, "decision failed; denied");
      decision = engineDeny("internal_error", "the decision could not be made", mode, 403);
    }
    // No step decided (a verifier that answered no claims): deny.
    decision ??= engineDeny("internal_error", "the decision could not be made", mode, 403);
    // Fail closed: only a well-formed allow is an allow.
    if (decision.allow !== true || decision.status !== 200) decision = { ...decision, allow: false, status: decision.status === 401 ? 401 : 403 };
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics?.decisions.inc({ allow: String(decision.allow), reason: decision.reason, flow: decision.flow ?? "none", adapter });
    metrics?.latency.observe({ adapter }, seconds);
    logger.info(
      {
        event: "decision",
        decision_id,
        adapter,
        method: req.method,
        path: path ?? null,
        // An invalid path is logged as received (bounded), so the refusal can be traced.
        raw_path: path === undefined ? String(req.path).slice(0, MAX_LOGGED_RAW_PATH) : undefined,
        route: decision.route?.template ?? null,
        flow: decision.flow,
        client_id: subject?.client_id ?? null,
        sub: subject?.sub ?? null,
        tenant_id: subject?.tenant_id ?? null,
        roles: subject?.roles ?? [],
        allow: decision.allow,
        status: decision.status,
        reason: decision.reason,
        message: decision.message,
        detail: decision.detail,
        request_id: req.trace?.requestId ?? null,
        traceparent: req.trace?.traceparent ?? null,
        client_address: req.trace?.clientAddress ?? null,
        would_deny: decision.would_deny?.reason ?? null,
        // The revision that decided (a reload may swap the engine while a decision runs).
        revision: revision ?? ctx.policy.engine?.revision ?? null,
        // The exact policy input (verified claims the policy reads; never the token), so that
        // `portier replay` can recompute this decision under another policy.
        input: input ?? null,
        latency_ms: Math.round(seconds * 1e6) / 1000,
      },
      "decision",
    );
    const { detail: _logged, ...answer } = decision;
    return { decision_id, ...answer, subject, ...(www !== undefined ? { www_authenticate: www } : {}) };
  };
}
