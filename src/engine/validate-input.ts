/**
 * Validates a DecisionInput against the input contract policies/input.schema.json (ajv, compiled once).
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import type { DecisionInput } from "./types.js";

export const INPUT_SCHEMA_URL = new URL("../../policies/input.schema.json", import.meta.url);

const ajv = new Ajv({ allErrors: false, strict: true, strictTuples: false, allowMatchingProperties: true });
const schema = JSON.parse(readFileSync(INPUT_SCHEMA_URL, "utf8")) as object;
const check = ajv.compile<DecisionInput>(schema);

/** Returns null when valid, else a message naming the field. */
export function inputProblem(input: unknown): string | null {
  if (check(input)) return null;
  const err = check.errors?.[0];
  if (!err) return "input is invalid";
  const where = err.instancePath === "" ? "input" : `input${err.instancePath.replace(/\//g, ".")}`;
  const extra = err.keyword === "additionalProperties" ? ` (${String(err.params.additionalProperty)})` : "";
  return `${where} ${err.message ?? "is invalid"}${extra}`;
}
