/**
 * Reads how a bundle's project reads tokens (data.catalog.project.claims and .application_token, from
 * data/project.json): which claims name the subject and the tenant, and what an application token must carry.
 * Absent, the spec's: sub, tenant_id, audience and scope apiclients. A present but malformed choice refuses the
 * bundle (the service would otherwise read the wrong claim).
 */
import { EngineLoadError } from "./errors.js";
import type { TokenShape } from "./types.js";

export const SPEC_TOKEN_SHAPE: TokenShape = Object.freeze({
  subjectClaim: "sub",
  tenantClaim: "tenant_id",
  applicationAudience: "apiclients",
  applicationScope: "apiclients",
});

const record = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export function catalogTokenShape(data: Record<string, unknown>, source: string): TokenShape {
  const project = record(record(data.catalog)?.project);
  const where = `${source}:/data.json: catalog.project`;
  const pick = (group: string, field: string, nullable: boolean, fallback: string | null): string | null => {
    const choices = project?.[group];
    if (choices === undefined) return fallback;
    const value = record(choices)?.[field];
    if ((typeof value === "string" && value !== "") || (nullable && value === null)) return value;
    throw new EngineLoadError(
      "data_invalid",
      `${where}.${group}.${field} must be a claim name${nullable ? " or null" : ""} ` +
        "(build the bundle with portier bundle build)",
    );
  };
  return Object.freeze({
    subjectClaim: pick("claims", "subject", false, SPEC_TOKEN_SHAPE.subjectClaim) as string,
    tenantClaim: pick("claims", "tenant", true, SPEC_TOKEN_SHAPE.tenantClaim),
    applicationAudience: pick("application_token", "audience", true, SPEC_TOKEN_SHAPE.applicationAudience),
    applicationScope: pick("application_token", "scope", true, SPEC_TOKEN_SHAPE.applicationScope),
  });
}

/** The aud and scope facts of an application token of this shape (the review tools' application caller). */
export function applicationTokenFacts(shape: TokenShape): { aud: string[]; scope: string[] } {
  return {
    aud: shape.applicationAudience === null ? [] : [shape.applicationAudience],
    scope: shape.applicationScope === null ? [] : [shape.applicationScope],
  };
}
