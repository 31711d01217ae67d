/**
 * SCIM filters (RFC 7644 section 3.4.2.2) parsed and tested by the scim2-parse-filter library, with the RFC's
 * rule on case: a string compared with eq, ne, co, sw, ew, gt, ge, lt or le matches without case unless the
 * attribute is case-exact (RFC 7643: `id`, `externalId`, `meta.version`, references). The library's own tester
 * compares strings exactly, so `userName sw "Test"` would miss "testuser".
 */
import { parse, Tester, type Filter } from "scim2-parse-filter";
import { messageOf } from "../../errors/caught.js";
import { ScimError } from "./scim-error.js";

const CASE_EXACT = new Set(["id", "externalid", "meta.version", "$ref"]);

/** An attribute path without its schema URN, lowercased: `urn:...:User:name.givenName` is `name.givenname`. */
export function bareAttribute(path: string): string {
  return path.slice(path.lastIndexOf(":") + 1).toLowerCase();
}

/** Whether RFC 7643 makes the attribute case-exact (compared and sorted with case). */
export function caseExact(path: string): boolean {
  const bare = bareAttribute(path);
  return CASE_EXACT.has(bare) || bare.endsWith(".$ref");
}

const lower = (v: unknown) => (typeof v === "string" ? v.toLowerCase() : v);

class CaseAwareTester extends Tester {
  override test(r: unknown, f: Filter): boolean {
    if ("compValue" in f && typeof f.compValue === "string" && !caseExact(f.attrPath)) {
      const op = f.op;
      const value = f.compValue.toLowerCase();
      return this.attrTest(this.attrPath(f.attrPath), r, (s) => this[op](lower(s), value));
    }
    return super.test(r, f);
  }
}

/** The filter text parsed, or a 400 invalidFilter naming what the parser could not read. */
export function parseFilter(text: string): Filter {
  try {
    return parse(text);
  } catch (err) {
    throw new ScimError(400, "invalidFilter", `filter: ${messageOf(err)}`);
  }
}

/** A test of resources (as answered) against a parsed filter. */
export function compileFilter(f: Filter): (resource: unknown) => boolean {
  const tester = new CaseAwareTester();
  return (resource) => tester.test(resource, f);
}
