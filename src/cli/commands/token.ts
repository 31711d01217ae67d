/**
 * `portier token --user NAME [--project DIR] [--issuer URL] [--client-id ID] [--redirect-uri URI] [--scope S]`:
 * a user access token for one sample user, from the local issuer that `portier dev` (or `portier issuer`) runs,
 * by the real flow: /connect/authorize with a PKCE S256 challenge and the dev issuer's login_hint (no password
 * form), then /connect/token with the code and its verifier. Prints the access token on stdout, nothing else,
 * so that `TOKEN=$(portier token --user rick)` works. The scope asked for is openid plus the scope the project
 * requires of user tokens (data/project.json). Development only: the issuer must run in dev mode.
 */
import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";
import { existsSync, readFileSync } from "node:fs";
import { parse, PROJECT_OPTION, usageError, type CommandSpec } from "../args.js";
import { resolveProject } from "../../toolchain/project.js";
import { EXIT } from "../exit-codes.js";
import { messageOf } from "../../errors/caught.js";

export const DEFAULT_ISSUER = "http://127.0.0.1:9400";
const DEFAULT_CLIENT = "portier-demo-web";
const DEFAULT_REDIRECT = "http://127.0.0.1:8400/callback";
/** The local issuer answers at once; a token that takes longer is an issuer that is not there. */
const STEP_TIMEOUT_MS = 10_000;

export const SPEC = {
  name: "portier token",
  summary:
    "Prints a user access token for one sample user of the project, from the local issuer of `portier dev`\n" +
    "(authorization code + PKCE, signed in by the dev issuer's login_hint). Development only.",
  options: {
    user: { type: "string", value: "NAME", description: "the sample user: preferred_username or sub (required)" },
    project: PROJECT_OPTION,
    issuer: { type: "string", value: "URL", description: "the local issuer", default: DEFAULT_ISSUER },
    "client-id": { type: "string", value: "ID", description: "the public client to ask as", default: DEFAULT_CLIENT },
    "redirect-uri": {
      type: "string",
      value: "URI",
      description: "a redirect URI the client registered (the issuer redirects to it; nothing is fetched there)",
      default: DEFAULT_REDIRECT,
    },
    scope: {
      type: "string",
      value: "SCOPES",
      description: "the scopes to ask for, space-separated",
      default: "openid, plus the user scope of data/project.json",
    },
  },
  exits: { ok: "the access token was printed (an issuer that refuses or cannot be reached exits 2)" },
} as const satisfies CommandSpec;

/** The scope the project requires of user tokens (data/project.json user_token.scope), if any. */
function projectScope(dir: string): string | undefined {
  const file = join(dir, "data", "project.json");
  if (!existsSync(file)) return undefined;
  const scope = (JSON.parse(readFileSync(file, "utf8")) as { user_token?: { scope?: unknown } }).user_token?.scope;
  return typeof scope === "string" ? scope : undefined;
}

/** An OAuth error answer in one line: error and description, else the status. */
async function oauthProblem(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: string; error_description?: string };
    if (body.error) return `${body.error}${body.error_description ? `: ${body.error_description}` : ""}`;
  } catch {
    // not JSON: the status says it
  }
  return `HTTP ${res.status}`;
}

export async function mintUserToken(opts: {
  issuer: string;
  user: string;
  clientId: string;
  redirectUri: string;
  scope: string;
}): Promise<string> {
  const verifier = randomBytes(32).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const authorize = new URL("/connect/authorize", opts.issuer);
  const query = {
    response_type: "code",
    client_id: opts.clientId,
    redirect_uri: opts.redirectUri,
    scope: opts.scope,
    state: randomBytes(8).toString("hex"),
    nonce: randomBytes(8).toString("hex"),
    code_challenge: challenge,
    code_challenge_method: "S256",
    login_hint: opts.user,
  };
  for (const [k, v] of Object.entries(query)) authorize.searchParams.set(k, v);
  const signal = () => AbortSignal.timeout(STEP_TIMEOUT_MS);
  const answer = await fetch(authorize, { redirect: "manual", signal: signal() });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`the issuer did not sign ${opts.user} in: ${await oauthProblem(answer)}`);
  const back = new URL(location);
  const code = back.searchParams.get("code");
  if (!code) {
    const why = back.searchParams.get("error_description") ?? back.searchParams.get("error") ?? "no code";
    throw new Error(`the issuer did not sign ${opts.user} in: ${why}`);
  }
  const exchanged = await fetch(new URL("/connect/token", opts.issuer), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      client_id: opts.clientId,
      code,
      redirect_uri: opts.redirectUri,
      code_verifier: verifier,
    }),
    signal: signal(),
  });
  if (!exchanged.ok) throw new Error(`the issuer refused the code: ${await oauthProblem(exchanged)}`);
  const token = ((await exchanged.json()) as { access_token?: unknown }).access_token;
  if (typeof token !== "string") throw new Error("the issuer's token answer has no access_token");
  return token;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length > 0) throw usageError(SPEC, `unexpected argument "${positionals[0]}"`);
  if (!values.user) throw usageError(SPEC, "--user NAME is required (a sample user of data/sample/users.json)");
  const issuer = values.issuer ?? DEFAULT_ISSUER;
  if (!/^https?:\/\//.test(issuer)) throw usageError(SPEC, `--issuer: "${issuer}" is not an http(s) URL`);
  const extra = values.scope === undefined ? projectScope(resolveProject(values.project).dir) : undefined;
  try {
    const token = await mintUserToken({
      issuer,
      user: values.user,
      clientId: values["client-id"] ?? DEFAULT_CLIENT,
      redirectUri: values["redirect-uri"] ?? DEFAULT_REDIRECT,
      scope: values.scope ?? ["openid", ...(extra ? [extra] : [])].join(" "),
    });
    process.stdout.write(`${token}\n`);
    return EXIT.ok;
  } catch (err) {
    const why = unreachable(err)
      ? `no issuer answers at ${issuer}; start one with portier dev (or pass --issuer URL)`
      : messageOf(err);
    console.error(`portier token: ${why}`);
    return EXIT.error;
  }
}

/** fetch() reached no one: its network failure is a TypeError caused by the socket's error (ECONNREFUSED...). */
function unreachable(err: unknown): boolean {
  return err instanceof TypeError && err.cause instanceof Error;
}
