/**
 * Where the decision log goes, for the start-up line: stdout, and the collector's URL without credentials
 * (or none).
 */
import { redactUrls } from "../reload/index.js";
import type { ServiceConfig } from "./config.js";

export function decisionLogSinks(config: ServiceConfig): { stdout: boolean; collector: string | null } {
  return {
    stdout: config.decisionLogStdout,
    collector: config.decisionLogUrl === undefined ? null : redactUrls(config.decisionLogUrl),
  };
}
