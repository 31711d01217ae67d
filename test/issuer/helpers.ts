/**
 * Shared helpers of the issuer tests: sample constants, PKCE values, driving /connect/authorize with
 * fetch and login_hint, and calling the token endpoint directly.
 */
import { createHash, randomBytes } from "node:crypto";
import { decodeJwt, decodeProtectedHeader } from "jose";

export { TENANT_A, TENANT_B, WEB_CLIENT, REDIRECT_URI, MACHINE_CLIENT, MACHINE_SECRET } from "../support/sample.js";
import { WEB_CLIENT, REDIRECT_URI } from "../support/sample.js";
export const TEACHER = { username: "enseignant.jeune", sub: "5db8efe5-c2dc-4aa9-90dc-1f8d12487df3" };
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

/** Independent at_hash / s_hash computation for RS256 (left half of SHA-256, base64url). */
export function expectedHalfHash(value: string): string {
  return createHash("sha256").update(value, "ascii").digest().subarray(0, 16).toString("base64url");
}

/** A parameter set to undefined is left out of the request (tests override a complete set). */
export interface AuthorizeParams {
  client_id?: string | undefined;
  redirect_uri?: string | undefined;
  response_type?: string | undefined;
  scope?: string | undefined;
  state?: string | undefined;
  nonce?: string | undefined;
  code_challenge?: string | undefined;
  code_challenge_method?: string | undefined;
  login_hint?: string | undefined;
  [extra: string]: string | undefined;
}

export function authorizeUrl(issuerUrl: string, params: AuthorizeParams): string {
  const url = new URL(`${issuerUrl}/connect/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

/** Calls /connect/authorize without following the redirect. */
export async function authorizeRaw(
  issuerUrl: string,
  params: AuthorizeParams,
): Promise<{ status: number; location: URL | undefined; body: string }> {
  const res = await fetch(authorizeUrl(issuerUrl, params), { redirect: "manual" });
  const location = res.headers.get("location");
  return { status: res.status, location: location ? new URL(location) : undefined, body: await res.text() };
}

/** A complete authorization request for the web client, signed in by login_hint; returns the code. */
export async function obtainCode(
  issuerUrl: string,
  overrides: AuthorizeParams = {},
): Promise<{ code: string; verifier: string; state: string; nonce: string; location: URL }> {
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(12).toString("base64url");
  const nonce = randomBytes(12).toString("base64url");
  const { status, location } = await authorizeRaw(issuerUrl, {
    client_id: WEB_CLIENT,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid profile email apiclients",
    state,
    nonce,
    code_challenge: challenge,
    code_challenge_method: "S256",
    login_hint: TEACHER.username,
    ...overrides,
  });
  const code = location?.searchParams.get("code");
  if (status !== 302 || !location || !code)
    throw new Error(`authorize did not redirect with a code (status ${status}, ${location?.href})`);
  return { code, verifier, state, nonce, location };
}

export async function tokenRequest(
  issuerUrl: string,
  params: Record<string, string>,
  init: { headers?: Record<string, string>; query?: boolean } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const form = new URLSearchParams(params);
  const res = init.query
    ? await fetch(`${issuerUrl}/connect/token?${form.toString()}`, { method: "POST", headers: init.headers ?? {} })
    : await fetch(`${issuerUrl}/connect/token`, { method: "POST", body: form, headers: init.headers ?? {} });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

export function basicAuth(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString("base64")}`;
}

export function decode(token: string): { header: Record<string, unknown>; claims: Record<string, unknown> } {
  return {
    header: decodeProtectedHeader(token),
    claims: decodeJwt(token),
  };
}
