/**
 * The service's JSON answers as tests read them, typed by the service's own types (DecisionAnswer, the reload
 * statuses), so that a test reads fields it names and the type checker knows them. The types say what a test
 * expects to find; the test's expect() is still the check.
 */
import type { KeyStatus } from "../../src/auth/index.js";
import type { DirectoryStatus } from "../../src/directory/index.js";
import type { DecisionAnswer } from "../../src/service/decide/decide.js";
import type { PolicyStatus } from "../../src/service/policy.js";
import type { ShadowStatus } from "../../src/service/shadow/shadow.js";

/**
 * A body of POST /decide as tests read it: one answer (DecisionAnswer less www_authenticate, which goes to a
 * header), or for a refused request `error` and `message` (then the answer's fields are absent).
 */
export type DecideJson = Omit<DecisionAnswer, "www_authenticate"> & { error?: string; message?: string };

/** What GET /ready answers (src/service/http/app.ts). */
export interface ReadyJson {
  ready: boolean;
  missing: string[];
  problems: string[];
  policy: PolicyStatus;
  keys: KeyStatus;
  /** null when the service runs without a directory: the tests that read it configure one. */
  directory: DirectoryStatus;
  /** null without --shadow-bundle or --shadow-bundle-url. */
  shadow: ShadowStatus | null;
}

/** A response's JSON body read once, as the type the caller expects (its assertions check it). */
export async function json<T>(res: { json(): Promise<unknown> }): Promise<T> {
  return (await res.json()) as T;
}
