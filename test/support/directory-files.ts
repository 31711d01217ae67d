/**
 * Directory files as feeds write them: an NDJSON text ends with its end record (records before it, SHA-256
 * of every byte before it), as `portier directory seal` appends it (README "Reloads fail safe").
 */
import { createHash } from "node:crypto";

/** The whole text of a sealed NDJSON file holding these lines (records; blank lines are kept, not counted). */
export function sealNdjson(lines: string[]): string {
  const body = lines.length === 0 ? "" : `${lines.join("\n")}\n`;
  const records = lines.filter((l) => l.trim() !== "").length;
  const sha256 = createHash("sha256").update(body, "utf8").digest("hex");
  return `${body}${JSON.stringify({ portier_end: { records, sha256 } })}\n`;
}
