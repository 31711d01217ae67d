/**
 * The --scim-* options that only make sense together, each refusal naming the option and the fix.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/service/config.js";

const BASE = ["--issuer", "https://auth.example"];
const problem = (args: string[]): string | undefined => {
  try {
    loadConfig([...BASE, ...args], {});
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
};

describe("SCIM options", () => {
  it.each([
    [
      ["--scim-token-file", "t"],
      /^config\.scimTokenFile: needs a store .*--scim-journal FILE.*--scim-postgres-url URL/,
    ],
    [["--scim-journal", "j"], /^config\.scimJournal: needs --scim-token-file/],
    [["--scim-postgres-url", "postgres://db/x"], /^config\.scimPostgresUrl: needs --scim-token-file/],
    [
      ["--scim-token-file", "t", "--scim-journal", "j", "--scim-postgres-url", "postgres://db/x"],
      /^config\.scimPostgresUrl: cannot be combined with --scim-journal/,
    ],
    [
      ["--scim-token-file", "t", "--scim-journal", "j", "--workers", "2"],
      /^config\.scimJournal: one process .*--workers/,
    ],
    [
      ["--scim-token-file", "t", "--scim-journal", "j", "--roles-claim", "roles"],
      /^config\.scimTokenFile: cannot be combined with --roles-claim/,
    ],
    [
      ["--scim-token-file", "t", "--scim-journal", "j", "--no-directory"],
      /^config\.noDirectory: cannot be combined with --scim-token-file/,
    ],
    [["--scim-token-file", "t", "--scim-postgres-url", "mysql://db"], /^config\.scimPostgresUrl: must match pattern/],
    [
      ["--scim-token-file", "t", "--scim-journal", "j", "--scim-sub-attribute", "email"],
      /^config\.scimSubAttribute: must be one of/,
    ],
  ])("%j is refused", (args, message) => {
    expect(problem(args)).toMatch(message);
  });

  it.each([
    [["--scim-token-file", "t", "--scim-journal", "j"]],
    [["--scim-token-file", "t", "--scim-postgres-url", "postgres://db/x", "--workers", "2"]],
    [["--scim-token-file", "t", "--scim-journal", "j", "--directory", "users.json"]],
  ])("%j is a directory source of its own", (args) => {
    expect(problem(args)).toBeUndefined();
  });
});
