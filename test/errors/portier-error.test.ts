/**
 * The error model: every error class of src extends PortierError, and each has its stable code (the static
 * and the instance's), or for a family the list of codes its instances carry. The table pins them: a code
 * changed or a class added without a row fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PortierError } from "../../src/errors/portier-error.js";
import { LogRulesReadsError } from "../../src/toolchain/log-rules-reads.js";
import { TokenError } from "../../src/auth/token-error.js";
import { DataError } from "../../src/catalog/data-error.js";
import { RoleNameError } from "../../src/catalog/role-name-index.js";
import { HelpRequest, UsageError } from "../../src/cli/args.js";
import { DirectoryLoadError } from "../../src/directory/load-directory.js";
import { RecordSyntaxError } from "../../src/directory/record-stream.js";
import { EngineLoadError, PolicyEvaluationError, POLICY_ERROR_MESSAGE } from "../../src/engine/errors.js";
import { PageError } from "../../src/issuer/endpoints/authorize.js";
import { OAuthError } from "../../src/issuer/oauth-error.js";
import { DataFileError } from "../../src/issuer/sample-data.js";
import { FetchError } from "../../src/reload/http-client.js";
import { GuardRefusal } from "../../src/reload/reloader.js";
import { ConfigError } from "../../src/service/config.js";
import { StartError } from "../../src/service/start-service.js";
import { TracingConfigError } from "../../src/service/tracing/tracing-env.js";
import { BuildError } from "../../src/toolchain/build-bundle.js";
import { PolicySourceError } from "../../src/review/load-policy-source.js";
import { RevisionError } from "../../src/toolchain/export-revision.js";
import { StaleBundleError } from "../../src/review/stale-bundle.js";
import { ReviewSourceError } from "../../src/review/review-sides.js";
import { MaskRuleError } from "../../src/service/decision-logs/mask.js";
import { TokenFileError } from "../../src/service/decision-logs/token-file.js";
import { JournalError } from "../../src/service/scim/journal-store.js";
import { ScimError } from "../../src/service/scim/scim-error.js";
import { InputFileError } from "../../src/files/read-input-file.js";
import { ProjectError } from "../../src/toolchain/project.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

type ErrorClass = (abstract new (...args: never[]) => PortierError) & {
  readonly code: string;
  readonly codes: readonly string[];
};

/** Class, its static code, an instance, the instance's code. */
const SINGLE: [ErrorClass, string, PortierError][] = [
  [DataError, "data_invalid", new DataError("roles.json", "roles[0]", "is blank")],
  [RoleNameError, "role_name_invalid", new RoleNameError("roles[0].id", "is blank")],
  [UsageError, "usage", new UsageError("unknown option")],
  [HelpRequest, "help", new HelpRequest("usage: portier")],
  [BuildError, "build_failed", new BuildError("opa build failed")],
  [ConfigError, "config", new ConfigError(["--port: not a number"])],
  [StartError, "start_failed", new StartError("cannot listen")],
  [TracingConfigError, "tracing_config", new TracingConfigError("OTEL_TRACES_SAMPLER: not a sampler")],
  [RecordSyntaxError, "record_syntax_invalid", new RecordSyntaxError("users.json:1:2: unexpected }")],
  [DirectoryLoadError, "directory_invalid", new DirectoryLoadError("users.json: too large")],
  [FetchError, "fetch_failed", new FetchError("GET failed", 502)],
  [GuardRefusal, "reload_refused", new GuardRefusal("would drop 90% of users")],
  [DataFileError, "sample_data_invalid", new DataFileError("users.json", "/0", "must be object")],
  [PolicyEvaluationError, "policy_error", new PolicyEvaluationError("RuntimeError: unreachable")],
  [StaleBundleError, "bundle_stale", new StaleBundleError("build/bundle.tar.gz is stale")],
  [PolicySourceError, "policy_source_invalid", new PolicySourceError("not found: mian")],
  [RevisionError, "revision_invalid", new RevisionError("not found: mian (no git revision of .)")],
  [ReviewSourceError, "review_source", new ReviewSourceError("not found: mian")],
  [LogRulesReadsError, "log_rules_reads_failed", new LogRulesReadsError("opa deps failed:\n1 error occurred")],
  [MaskRuleError, "decision_log_mask_invalid", new MaskRuleError("mask: /input/x is not a JSON pointer")],
  [TokenFileError, "decision_log_token_file", new TokenFileError("token file: empty")],
  [JournalError, "scim_journal_invalid", new JournalError("scim.journal:3: not a journal step")],
  [ScimError, "scim_error", new ScimError(409, "uniqueness", "userName is taken")],
  [ProjectError, "project_invalid", new ProjectError("build/my-api is not a policy project (no data/routes.json)")],
];

const TOKEN_CODES = [
  "token_missing",
  "token_malformed",
  "token_too_large",
  "alg_not_allowed",
  "kid_unknown",
  "signature_invalid",
  "issuer_mismatch",
  "audience_mismatch",
  "token_expired",
  "token_not_yet_valid",
  "typ_invalid",
  "id_token_not_accepted",
  "claims_invalid",
  "crit_unsupported",
  "keys_unavailable",
  "nonce_mismatch",
  "at_hash_mismatch",
  "s_hash_mismatch",
];
const ENGINE_LOAD_CODES = [
  "bundle_unreadable",
  "bundle_invalid",
  "bundle_too_large",
  "manifest_invalid",
  "entrypoint_missing",
  "wasm_invalid",
  "data_invalid",
  "signature_invalid",
];
const OAUTH_CODES = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "unsupported_response_type",
  "access_denied",
  "login_required",
  "server_error",
  "invalid_token",
  "insufficient_scope",
];

/** Class, its static (family) code, the codes its instances carry, an instance, the instance's code. */
const FAMILIES: [ErrorClass, string, string[], PortierError, string][] = [
  [TokenError, "token_invalid", TOKEN_CODES, new TokenError("token_expired", "the token expired"), "token_expired"],
  [
    EngineLoadError,
    "bundle_invalid",
    ENGINE_LOAD_CODES,
    new EngineLoadError("wasm_invalid", "not a module"),
    "wasm_invalid",
  ],
  [OAuthError, "oauth_error", OAUTH_CODES, new OAuthError("invalid_grant", "code already used"), "invalid_grant"],
  [PageError, "oauth_error", OAUTH_CODES, new PageError("invalid_client", "unknown client_id"), "invalid_client"],
  [
    InputFileError,
    "file_refused",
    ["file_not_regular", "file_too_large"],
    new InputFileError("file_not_regular", "/dev/zero", "not a regular file (a character device)"),
    "file_not_regular",
  ],
];

describe("the codes table", () => {
  it.each(SINGLE.map(([cls, code, instance]) => [cls.name, code, cls, instance] as const))(
    "%s: code %s, on the class and on every instance",
    (_name, code, cls, instance) => {
      expect(cls.code).toBe(code);
      expect(cls.codes).toEqual([code]);
      expect(instance).toBeInstanceOf(cls);
      expect(instance).toBeInstanceOf(PortierError);
      expect(instance.code).toBe(code);
      expect(instance.name).toBe(cls.name);
    },
  );

  it.each(
    FAMILIES.map(
      ([cls, code, codes, instance, instanceCode]) => [cls.name, code, cls, codes, instance, instanceCode] as const,
    ),
  )("%s: family %s, its codes, an instance with one of them", (_name, code, cls, codes, instance, instanceCode) => {
    expect(cls.code).toBe(code);
    expect(cls.codes).toEqual(codes);
    expect(instance).toBeInstanceOf(cls);
    expect(instance).toBeInstanceOf(PortierError);
    expect(instance.code).toBe(instanceCode);
    expect(instance.name).toBe(cls.name);
  });

  it("no two classes share a static code, and a single-code class does not reuse a family's code", () => {
    const single = SINGLE.map(([, code]) => code);
    const families = FAMILIES.filter(([cls]) => cls !== PageError).map(([, code]) => code);
    expect(new Set([...single, ...families]).size).toBe(single.length + families.length);
  });
});

describe("public text and internal detail", () => {
  it("the message is the public text; the detail is kept apart", () => {
    const err = new PolicyEvaluationError("RuntimeError: unreachable");
    expect(err.message).toBe(POLICY_ERROR_MESSAGE);
    expect(err.message).not.toContain("unreachable");
    expect(err.detail).toBe("RuntimeError: unreachable");
  });

  it("an error without detail has none; the cause is kept", () => {
    const cause = new Error("EACCES");
    const err = new PortierError("cannot read", { cause });
    expect(err.detail).toBeUndefined();
    expect(err.cause).toBe(cause);
  });
});

/** Every `class X extends Y` in src, as [file, X, Y]. */
function declaredClasses(dir = join(PROJECT_ROOT, "src")): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...declaredClasses(path));
    else if (entry.name.endsWith(".ts")) {
      for (const m of readFileSync(path, "utf8").matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g))
        out.push([path, m[1]!, m[2]!]);
    }
  }
  return out;
}

describe("every error class of src is in the model", () => {
  const classes = declaredClasses();
  const errorClasses = new Set(["PortierError"]);
  // Transitively: a class extending an error class is an error class.
  for (let grew = true; grew;) {
    grew = false;
    for (const [, name, base] of classes)
      if (errorClasses.has(base) && !errorClasses.has(name)) grew = errorClasses.add(name) !== undefined;
  }

  it("only PortierError extends Error itself (or another built-in error)", () => {
    const direct = classes
      .filter(([, , base]) => /Error$/.test(base) && !errorClasses.has(base))
      .map(([file, name, base]) => `${file}: ${name} extends ${base}`);
    expect(direct).toEqual([expect.stringMatching(/src\/errors\/portier-error\.ts: PortierError extends Error$/)]);
  });

  it("every class that extends PortierError has a row in the codes table", () => {
    const inTable = new Set([...SINGLE.map(([cls]) => cls.name), ...FAMILIES.map(([cls]) => cls.name)]);
    expect([...errorClasses].filter((name) => name !== "PortierError" && !inTable.has(name))).toEqual([]);
    expect([...inTable].filter((name) => !errorClasses.has(name))).toEqual([]);
  });
});
