/**
 * The shadow candidate's start and stop: its own PolicyHolder, so the candidate follows the enforced bundle's
 * rules (loaded completely before it replaces the previous candidate, --bundle-max-bytes, --verification-key,
 * the file watched or the URL polled with back-off; log events `shadow_loaded`, `shadow_refused`), and the Shadow
 * the recorder offers decisions to. A candidate that cannot be loaded leaves the service serving and ready: it
 * is a problem on /ready (shadowProblem), and the source keeps being watched or polled.
 */
import type { DecisionMemoOptions, VerificationKey } from "../../engine/index.js";
import type { ReloadLogger } from "../../reload/index.js";
import { PolicyHolder } from "../policy.js";
import { Shadow, type ShadowStatus } from "./shadow.js";

export interface ShadowSettings {
  shadowBundle?: string | undefined;
  shadowBundleUrl?: string | undefined;
  shadowSample: number;
  bundlePollSeconds: number;
  bundleMaxBytes: number;
  watch: boolean;
  decisionMemoEntries: number;
}

export interface RunningShadow {
  shadow: Shadow;
  /** Evaluates what still waits (its log lines are written), then stops the candidate's reloads. */
  close(): Promise<void>;
}

/** Undefined when no candidate is configured. Never throws for a broken candidate. */
export async function startShadow(
  settings: ShadowSettings,
  logger: ReloadLogger,
  verificationKey: VerificationKey | undefined,
): Promise<RunningShadow | undefined> {
  const { shadowBundle: file, shadowBundleUrl: url } = settings;
  if (file === undefined && url === undefined) return undefined;
  // Its own memo and tally: the candidate's lookups are not the service's memo hit rate.
  const memo: DecisionMemoOptions | undefined =
    settings.decisionMemoEntries > 0 ? { entries: settings.decisionMemoEntries } : undefined;
  const holder = new PolicyHolder(
    logger,
    url !== undefined ? { url, pollSeconds: settings.bundlePollSeconds } : { file: file!, watch: settings.watch },
    settings.bundleMaxBytes,
    verificationKey,
    memo,
    "shadow",
  );
  await holder.start();
  const shadow = new Shadow(holder, { sample: settings.shadowSample });
  return {
    shadow,
    async close() {
      shadow.flush();
      await holder.close();
    },
  };
}

/** The /ready problem of a candidate that is not loaded or whose last reload was refused (never unready). */
export function shadowProblem(s: ShadowStatus): string | undefined {
  if (!s.loaded)
    return (
      "shadow: candidate not loaded, no decision is shadowed (enforcement unaffected): " +
      (s.lastError ?? "not loaded yet")
    );
  if (s.lastError)
    return `shadow: last reload refused, candidate revision ${s.revision} keeps being evaluated: ${s.lastError}`;
  return undefined;
}
