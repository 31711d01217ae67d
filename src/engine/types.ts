/**
 * The engine's contract: what the service passes to the policy (DecisionInput, also written as the JSON
 * schema policies/input.schema.json) and the decision document the policy answers (Decision).
 */
import type { LogRules } from "./log-rules.js";

export type Flow = "accessCode" | "application";
export type RoleCheckMode = "enforce" | "audit";

/** The verified token claims the policy reads. Arrays are already normalised (scope, amr, aud). */
export interface TokenFacts {
  sub?: string;
  client_id?: string;
  aud?: string[];
  scope?: string[];
  auth_time?: number;
  idp?: string;
  tenant_id?: string;
  /** Present on ID tokens only; the policy refuses tokens that carry them. */
  nonce?: string;
  at_hash?: string;
  s_hash?: string;
}

export interface DecisionInput {
  /** Upper-case HTTP method of the original request. */
  method: string;
  /** Normalised path (see normalisePath): decoded once, NFC, no query or fragment. */
  path: string;
  token: TokenFacts;
  /** Role ids (the bundle's role catalog) of the caller, from the synced-users directory or a claim. */
  roles: string[];
  /** Whether the caller (sub) is synchronised in identity management. */
  synced: boolean;
  role_check: RoleCheckMode;
  /** Only on a decision asked by an AuthZEN PEP: its request, the subject's record standing in for a token. */
  authzen?: AuthzenInput;
}

/** An AuthZEN subject or resource as the PEP named it (properties passed through to the policy). */
export interface AuthzenEntity {
  type: string;
  id: string;
  properties?: Record<string, unknown>;
}

/** The AuthZEN request of one evaluation (defaults merged), as the policy reads it (input.authzen). */
export interface AuthzenInput {
  subject: AuthzenEntity;
  action: { name: string; properties?: Record<string, unknown> };
  resource: AuthzenEntity;
  context?: Record<string, unknown>;
}

export type DecisionReason =
  | "allowed"
  | "token_shape_unknown"
  | "method_not_allowed"
  | "route_unknown"
  | "scope_missing"
  | "tenant_mismatch"
  | "role_not_allowed"
  | "not_synced"
  // reasons produced outside the policy, by the engine or the service
  | "path_invalid"
  | "input_invalid"
  | "policy_error"
  | (string & {});

export interface RouteMatch {
  product: string;
  api: string;
  template: string;
  parameters: Record<string, string>;
}

export interface Decision {
  allow: boolean;
  status: 200 | 401 | 403;
  reason: DecisionReason;
  /** A sentence a person can read. */
  message: string;
  flow: Flow | null;
  route: RouteMatch | null;
  /** True whenever the answer relied on the deprecated role list of spec 4.3. */
  deprecated: boolean;
  mode: RoleCheckMode;
  /** Audit mode only: the role check that would have denied; null otherwise. */
  would_deny: { reason: DecisionReason; message: string } | null;
  /**
   * Engine denies only: what went wrong inside (a wasm trap's text). Internal: the service writes it to the
   * decision log line and never into an answer; `message` is the public text.
   */
  detail?: string;
}

/** One role of the bundle's catalog (data.catalog.roles). */
export interface CatalogRole {
  id: string;
  label: string;
  aliases: string[];
}

/**
 * How a bundle's project reads a token (data/project.json claims and application_token): the service reads the
 * subject and tenant from these claims and passes them to the policy as token.sub and token.tenant_id.
 */
export interface TokenShape {
  /** The claim naming the subject, the key of its directory record (the spec's: sub). */
  readonly subjectClaim: string;
  /** The claim naming the subject's tenant (the spec's: tenant_id); null: none, a record counts for any tenant. */
  readonly tenantClaim: string | null;
  /** An audience every application (client-credentials) token carries, or null (the spec's: apiclients). */
  readonly applicationAudience: string | null;
  /** A scope every application token carries, or null (the spec's: apiclients). */
  readonly applicationScope: string | null;
}

/** What an engine offers the service: decisions answered in the calling thread. */
export interface DecisionEngine {
  /**
   * Never throws for a bad input or a policy failure: those are denies with a reason (fail closed). `json`: the
   * input's JSON text, when the caller has encoded it already (the decision log writes it too).
   */
  decide(input: DecisionInput, json?: string): Decision;
  /** The role catalog of the bundle (data.catalog.roles): the names the service resolves to role ids. */
  readonly roles: readonly CatalogRole[];
  /** The route templates of the bundle's catalog (data.catalog.routes), each once, in catalog order. */
  readonly templates?: readonly string[];
  /** How the bundle's project reads tokens; absent: the spec's (SPEC_TOKEN_SHAPE). */
  readonly tokenShape?: TokenShape;
  /** Bundle revision from its manifest (or a content hash when the manifest has none). */
  readonly revision: string;
  /** The bundle's decision-log mask and drop rules, when it has them (log-rules.ts). */
  readonly logRules?: LogRules | undefined;
}
