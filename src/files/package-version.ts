/**
 * Portier's version, from its package.json, read once per process (the CLI's --version, the review's SARIF
 * driver, the decision logs' labels): src/files/ and dist/files/ are both two folders below package.json.
 */
import { readFileSync } from "node:fs";

let version: string | undefined;

export function packageVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string })
    .version;
  return version;
}
