/**
 * Test support for the SCIM service provider: a service started with --scim-token-file and a journal (or other
 * SCIM options), a SCIM client with the bearer token, and a decision for a user on a role-restricted route.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  decide,
  makeKeys,
  serveInProcess,
  tempDir,
  userToken,
  ISSUER,
  type InProcessService,
  type Keys,
} from "../helpers.js";
import { TENANT_A } from "../../support/sample.js";

export const TOKEN = "scim-test-token-0123456789";
export const SCIM_JSON = "application/scim+json";
/** A route Enseignant jeune, Directeur jeune and Intervenant jeune may call (spec 4.3). */
export const TEACHER_ROUTE = "/v2/ORG001/elevesJeunes";
/** A route every synced user may call. */
export const ALL_SYNCED_ROUTE = "/v2/ORG001/centres";

export interface ScimService extends InProcessService {
  keys: Keys;
  dir: string;
  scim(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ScimAnswer>;
  /** allow and reason of GET `path` for a user whose token's sub is `sub` (of tenant A unless `tenant`). */
  allowed(sub: string, path?: string, tenant?: string): Promise<{ allow: boolean; reason: string }>;
}

/** The fields of SCIM answers the tests read (a resource, a list or an error). */
export interface ScimBody {
  id: string;
  meta: { version: string; location: string; created: string };
  userName?: string;
  active?: boolean;
  members?: { value: string; display?: string }[];
  groups?: { value: string; display: string }[];
  schemas?: string[];
  Resources: ScimBody[];
  totalResults: number;
  itemsPerPage: number;
  startIndex: number;
  status: string;
  scimType?: string;
  detail: string;
  [attribute: string]: unknown;
}

export interface ScimAnswer {
  status: number;
  body: ScimBody;
  headers: Headers;
}

export async function scimRequest(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<ScimAnswer> {
  const res = await fetch(`${url}/scim/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { "content-type": SCIM_JSON }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as ScimBody, headers: res.headers };
}

/**
 * `portier serve` with SCIM on (token file, journal in a temp folder, and tenant A for every user unless `extra`
 * names --scim-tenant-attribute) plus `extra` arguments.
 */
export async function serveScim(extra: string[] = [], dir = tempDir(), keys?: Keys): Promise<ScimService> {
  const k = keys ?? (await makeKeys());
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(k.jwks));
  const tokenFile = join(dir, "scim-token");
  writeFileSync(tokenFile, `${TOKEN}\n`);
  const hasStore = extra.includes("--scim-postgres-url") || extra.includes("--scim-journal");
  const svc = await serveInProcess([
    "--issuer",
    ISSUER,
    "--jwks",
    jwks,
    "--scim-token-file",
    tokenFile,
    ...(hasStore ? [] : ["--scim-journal", join(dir, "scim.journal")]),
    ...(extra.includes("--scim-tenant-attribute") ? [] : ["--scim-tenant-id", TENANT_A]),
    ...extra,
  ]);
  return {
    ...svc,
    keys: k,
    dir,
    scim: (method, path, body, headers) => scimRequest(svc.url, method, path, body, headers),
    async allowed(sub, path = TEACHER_ROUTE, tenant = TENANT_A) {
      const token = await userToken(k, sub, { tenant_id: tenant });
      const { json } = await decide(svc.url, { method: "GET", path, token });
      return { allow: json.allow, reason: json.reason };
    },
  };
}

export const user = (userName: string, externalId: string, extra: Record<string, unknown> = {}) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName,
  externalId,
  active: true,
  ...extra,
});

export const patchOp = (...Operations: unknown[]) => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
  Operations,
});
