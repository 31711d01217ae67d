/**
 * The token shape the local issuer mints for a project, from its data/project.json: the claims naming the user
 * and the tenant, the user scope, the application audience and scope. Left out, the spec's (a project without
 * project.json requires no user scope, as its policies do).
 */
import { join } from "node:path";
import { loadCatalog } from "../catalog/index.js";
import { OIDC_SCOPES, SPEC_ISSUER_TOKEN_SHAPE, type IssuerTokenShape } from "../issuer/index.js";
import type { Project } from "../toolchain/project.js";

export function projectTokenShape(project: Project): IssuerTokenShape {
  const choices = loadCatalog(join(project.dir, "data")).project;
  const spec = SPEC_ISSUER_TOKEN_SHAPE;
  return {
    subjectClaim: choices?.claims?.subject ?? spec.subjectClaim,
    tenantClaim: choices?.claims ? choices.claims.tenant : spec.tenantClaim,
    userScope: choices ? choices.user_token.scope : null,
    applicationAudience: choices?.application_token ? choices.application_token.audience : spec.applicationAudience,
    applicationScope: choices?.application_token ? choices.application_token.scope : spec.applicationScope,
  };
}

/** The scopes a sign-in for this project asks for: the OpenID ones and the project's user scope. */
export function userSignInScope(shape: IssuerTokenShape): string {
  return [...OIDC_SCOPES, ...(shape.userScope !== null ? [shape.userScope] : [])].join(" ");
}

/** One line saying how the tokens differ from the spec's shape, or undefined when they do not. */
export function tokenShapeLine(shape: IssuerTokenShape): string | undefined {
  const spec = SPEC_ISSUER_TOKEN_SHAPE;
  const same = (Object.keys(spec) as (keyof IssuerTokenShape)[]).every((k) => shape[k] === spec[k]);
  if (same) return undefined;
  const or = (v: string | null, none: string) => v ?? none;
  return (
    `Tokens (data/project.json): user id in ${shape.subjectClaim}, tenant in ${or(shape.tenantClaim, "no claim")}, ` +
    `user scope ${or(shape.userScope, "none")}; application aud ${or(shape.applicationAudience, "none")}, ` +
    `scope ${or(shape.applicationScope, "none")}.`
  );
}
