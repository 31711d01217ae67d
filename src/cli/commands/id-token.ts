/**
 * `portier id-token validate`: checks an ID token the way a client application must (spec 2.1 / 5.4)
 * and prints its claims as JSON, or the named failure. Exit 0 valid, 1 invalid, 2 usage error.
 */
import { parseArgs } from "node:util";
import { createAccessTokenVerifier, validateIdToken, TokenError } from "../../auth/index.js";

const USAGE = `Usage: portier id-token validate --client-id ID --issuer URL [--jwks FILE-OR-URL]
                                [--access-token TOKEN] [--state STATE] [--nonce NONCE] <id-token>

Validates an ID token: signature (issuer keys by discovery, or --jwks), iss, aud = client id, exp, iat,
and when given nonce, at_hash (of --access-token) and s_hash (of --state). Prints the claims as JSON.`;

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
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        "client-id": { type: "string" },
        issuer: { type: "string" },
        jwks: { type: "string" },
        "access-token": { type: "string" },
        state: { type: "string" },
        nonce: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
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
      ...(jwks === undefined ? {} : /^https?:\/\//.test(jwks) ? { jwksUri: jwks } : { jwksFile: jwks }),
      cacheSize: 0,
    });
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}`);
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
    if (err instanceof TokenError) {
      io.err(`invalid ID token: ${err.code}: ${err.message}`);
      return 1;
    }
    io.err(`id-token validate failed: ${(err as Error)?.message ?? String(err)}`);
    return 1;
  } finally {
    verifier.close();
  }
}
