/**
 * What build of Portier runs: the package version, the Node.js version and the source revision. The revision is
 * the one the image build records in PORTIER_REVISION (a git commit), "unknown" when nothing recorded one.
 * `portier_build_info` and the spans' `service.version` read it.
 */
import { readFileSync } from "node:fs";

export interface BuildInfo {
  version: string;
  nodeVersion: string;
  revision: string;
}

let cached: BuildInfo | undefined;

export function buildInfo(env: Readonly<Record<string, string | undefined>> = process.env): BuildInfo {
  if (cached && env === process.env) return cached;
  // src/service/ and dist/service/ are both two folders below package.json.
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  const revision = env.PORTIER_REVISION?.trim() || "unknown";
  const info = { version: pkg.version, nodeVersion: process.versions.node, revision };
  if (env === process.env) cached = info;
  return info;
}
