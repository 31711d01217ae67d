/**
 * In-memory stores of the authorization flow: pending login requests (waiting for the login form) and
 * authorization codes (single-use, short-lived, bound to client, redirect URI and PKCE challenge). A
 * replayed code revokes the access tokens issued from it (RFC 6749 4.1.2).
 */
import { randomBytes } from "node:crypto";
import type { IssuerUser } from "./sample-data.js";

/** A validated /connect/authorize request. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scope: string[];
  codeChallenge: string;
  state?: string;
  nonce?: string;
}

export interface CodeRecord extends AuthorizationRequest {
  user: IssuerUser;
  authTime: number;
  sid: string;
  expiresAt: number;
  used: boolean;
  /** jti of access tokens issued from this code (revoked on replay) and when they expire at the latest. */
  issuedJtis: string[];
  revokeUntil: number;
}

export type CodeRedemption =
  { kind: "ok"; record: CodeRecord } | { kind: "unknown" } | { kind: "replayed" } | { kind: "expired" };

const LOGIN_TTL_SEC = 600;
/** Bound on each store, so a loop of requests cannot grow memory without limit; oldest entries go first. */
const MAX_ENTRIES = 10_000;

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export class GrantStore {
  private readonly codes = new Map<string, CodeRecord>();
  private readonly pending = new Map<string, { request: AuthorizationRequest; expiresAt: number }>();
  private readonly revokedJtis = new Map<string, number>();

  constructor(
    private readonly codeTtlSec: number,
    private readonly accessTtlSec: number,
    private readonly now: () => number,
  ) {}

  addPendingLogin(request: AuthorizationRequest): string {
    this.sweep();
    const id = randomToken();
    this.pending.set(id, { request, expiresAt: this.now() + LOGIN_TTL_SEC });
    dropOldest(this.pending);
    return id;
  }

  /** The pending request, still pending (a failed password keeps it). */
  pendingLogin(id: string): AuthorizationRequest | undefined {
    const entry = this.pending.get(id);
    if (!entry || entry.expiresAt <= this.now()) return undefined;
    return entry.request;
  }

  completeLogin(id: string): void {
    this.pending.delete(id);
  }

  issueCode(request: AuthorizationRequest, user: IssuerUser, authTime: number, sid: string): string {
    this.sweep();
    const code = randomToken();
    this.codes.set(code, {
      ...request,
      user,
      authTime,
      sid,
      expiresAt: this.now() + this.codeTtlSec,
      used: false,
      issuedJtis: [],
      revokeUntil: 0,
    });
    dropOldest(this.codes);
    return code;
  }

  /** Marks the code used whatever the outcome, so a code is never exchanged twice. */
  redeem(code: string): CodeRedemption {
    const record = this.codes.get(code);
    if (!record) return { kind: "unknown" };
    if (record.used) {
      for (const jti of record.issuedJtis) this.revokedJtis.set(jti, record.revokeUntil);
      return { kind: "replayed" };
    }
    record.used = true;
    if (record.expiresAt <= this.now()) return { kind: "expired" };
    return { kind: "ok", record };
  }

  /** Records an access token issued from a redeemed code, so a later replay of the code revokes it. */
  recordIssued(record: CodeRecord, jti: string): void {
    record.issuedJtis.push(jti);
    record.revokeUntil = this.now() + this.accessTtlSec;
  }

  isRevoked(jti: string): boolean {
    return this.revokedJtis.has(jti);
  }

  /** Drops expired entries; a redeemed code is kept while its access token lives, to detect replays. */
  private sweep(): void {
    const now = this.now();
    for (const [id, entry] of this.pending) if (entry.expiresAt <= now) this.pending.delete(id);
    for (const [code, record] of this.codes)
      if (Math.max(record.expiresAt, record.revokeUntil) <= now) this.codes.delete(code);
    for (const [jti, until] of this.revokedJtis) if (until <= now) this.revokedJtis.delete(jti);
  }
}

function dropOldest<K, V>(map: Map<K, V>): void {
  for (const key of map.keys()) {
    if (map.size <= MAX_ENTRIES) return;
    map.delete(key);
  }
}
