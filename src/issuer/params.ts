/**
 * Reads OAuth request parameters: each must appear at most once (RFC 6749 3.1, 3.2); the token endpoint
 * merges the form body with the query string the spec uses (4.1), refusing a parameter sent differently
 * in both.
 */
import type { Request } from "express";
import { OAuthError } from "./oauth-error.js";

export type Params = Record<string, string>;

export function singleValued(source: unknown, where: string): Params {
  const out: Params = {};
  if (!source || typeof source !== "object") return out;
  for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
    if (typeof value === "string") {
      if (value !== "") out[name] = value;
    } else {
      throw new OAuthError("invalid_request", `parameter ${name} must be sent once in the ${where}`);
    }
  }
  return out;
}

export function tokenRequestParams(req: Request): Params {
  const query = singleValued(req.query, "query string");
  const body = req.is("application/x-www-form-urlencoded") ? singleValued(req.body, "request body") : {};
  for (const [name, value] of Object.entries(query)) {
    if (body[name] !== undefined && body[name] !== value) {
      throw new OAuthError("invalid_request", `parameter ${name} differs between the query string and the body`);
    }
  }
  return { ...query, ...body };
}

export function splitScope(scope: string | undefined): string[] {
  return scope ? [...new Set(scope.split(" ").filter(Boolean))] : [];
}
