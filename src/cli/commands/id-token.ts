/**
 * `portier id-token validate`: checks an ID token the way a client application must (spec 2.1 / 5.4)
 * and prints its claims as JSON, or the named failure. Exit 0 valid, 1 invalid, 2 no answer (usage, the
 * issuer's keys not loaded).
 */
import { createAccessTokenVerifier, validateIdToken, TokenError, jwksSource } from "../../auth/index.js";
import { EXIT } from "../exit-codes.js";
import { HelpRequest, parse, renderHelp, usageLine, type CommandSpec } from "../args.js";
import { messageOf } from "../../errors/caught.js";

export const SPEC = {
  name: "portier id-token",
  positionals: "validate ID-TOKEN",
  summary:
    "Validates an ID token: signature (issuer keys by discovery, or --jwks), iss, aud = client id, exp, iat,\n" +
    "and when given nonce, at_hash (of --access-token) and s_hash (of --state). Prints the claims as JSON.",
  options: {
    "client-id": { type: "string", value: "ID", description: "the client the token must be addressed to (required)" },
    issuer: { type: "string", value: "URL", description: "the issuer the token must come from (required)" },
    jwks: {
      type: "string",
      value: "FILE|URL",
      description: "the issuer's keys instead of discovery",
      default: "discovery",
    },
    "access-token": {
      type: "string",
      value: "TOKEN",
      description: "check at_hash against this access token",
      default: "not checked",
    },
    state: { type: "string", value: "STATE", description: "check s_hash against this state", default: "not checked" },
    nonce: { type: "string", value: "NONCE", description: "the nonce the token must carry", default: "not checked" },
  },
  exits: { ok: "valid", finding: "invalid" },
} as const satisfies CommandSpec;

const USAGE = `${usageLine(SPEC)}\n(portier id-token --help lists the options)`;

export interface CommandIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIo: CommandIo = {
  out: (t) => process.stdout.write(`${t}\n`),
  err: (t) => process.stderr.write(`${t}\n`),
};

export async function run(argv: string[], io: CommandIo = defaultIo): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv, SPEC);
  } catch (err) {
    if (err instanceof HelpRequest) {
      io.out(renderHelp(SPEC));
      return 0;
    }
    io.err(messageOf(err));
    return 2;
  }
  const { values, positionals } = parsed;
  const args = positionals[0] === "validate" ? positionals.slice(1) : positionals;
  if (positionals[0] !== "validate") {
    io.err(`expected the subcommand "validate"\n${USAGE}`);
    return 2;
  }
  const missing = (["client-id", "issuer"] as const).filter((n) => !values[n]);
  if (missing.length) {
    io.err(`missing ${missing.map((m) => `--${m}`).join(", ")}\n${USAGE}`);
    return 2;
  }
  if (args.length !== 1 || !args[0]) {
    io.err(`expected exactly one ID token argument\n${USAGE}`);
    return 2;
  }
  const issuer = values.issuer!;
  const jwks = values.jwks;
  let verifier;
  try {
    verifier = createAccessTokenVerifier({
      issuer,
      ...jwksSource(jwks),
      cacheSize: 0,
    });
  } catch (err) {
    io.err(`${messageOf(err)}\n${USAGE}`);
    return 2;
  }
  try {
    await verifier.ready();
    const claims = await validateIdToken(args[0], {
      issuer,
      clientId: values["client-id"]!,
      keys: verifier,
      ...(values.nonce !== undefined ? { nonce: values.nonce } : {}),
      ...(values["access-token"] !== undefined ? { accessToken: values["access-token"] } : {}),
      ...(values.state !== undefined ? { state: values.state } : {}),
    });
    io.out(JSON.stringify(claims, null, 2));
    return 0;
  } catch (err) {
    // The issuer's keys not loading is no answer about the token (exit 2); any other TokenError is the finding.
    if (err instanceof TokenError && err.code !== "keys_unavailable") {
      io.err(`invalid ID token: ${err.code}: ${err.message}`);
      return EXIT.finding;
    }
    io.err(`id-token validate failed: ${err instanceof TokenError ? `${err.code}: ` : ""}${messageOf(err)}`);
    return EXIT.error;
  } finally {
    verifier.close();
  }
}
