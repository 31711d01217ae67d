/**
 * `portier dev`: the local issuer and the decision service together on loopback with the sample data,
 * plus copy-paste curl lines (machine token, user token via the issuer's dev login_hint, /decide calls) and a
 * sign-in page that shows what the signed-in user may call (dev-access.ts). With a team's project (--project DIR,
 * or the current folder), the issuer signs in the project's sample users (data/sample/users.json), the service
 * reads its portier.json, bundle (built first, from the data as it is) and sample directory, the issuer mints tokens
 * in the project's shape (data/project.json claims and scopes), and the lines to try use `portier token`.
 * Development only.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadUsers } from "../../issuer/index.js";
import { loadCatalog } from "../../catalog/index.js";
import { DEFAULT_ISSUER } from "./token.js";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { resolveProject, type Project } from "../../toolchain/project.js";
import { startIssuer, DEFAULT_DIRECTORY_FILE } from "../../issuer/index.js";
import { loadConfig, startService, ConfigError, type RunningService } from "../../service/index.js";
import { readableLogDestination } from "../readable-log.js";
import { EXIT } from "../exit-codes.js";
import { OPA_OPTION, PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { startDevCallback, type RunningDevCallback } from "../dev-callback.js";
import { accessOfToken } from "../dev-access.js";
import { projectTokenShape, tokenShapeLine, userSignInScope } from "../project-token-shape.js";
import { untilSignal } from "../shutdown.js";
import { codeOf, messageOf } from "../../errors/caught.js";

export const SPEC = {
  name: "portier dev",
  summary:
    "Runs the local issuer and the decision service together on loopback with the sample data, and prints\n" +
    "curl lines to try. Development only (this is what `make run` starts).",
  options: {
    project: PROJECT_OPTION,
    port: {
      type: "string",
      value: "N",
      description: "the decision service's port (0 = any free port)",
      default: "8181",
    },
    "issuer-port": {
      type: "string",
      value: "N",
      description: "the issuer's port (0 = any free port)",
      default: "9400",
    },
    "callback-port": {
      type: "string",
      value: "N",
      description:
        "the sample web client's port: open it in a browser to sign in; its /callback shows the tokens " +
        "(0 = any free port)",
      default: "8400",
    },
    "log-level": {
      type: "string",
      value: "LEVEL",
      description: "the service's log level (decisions are info), printed as readable lines",
      default: "info",
    },
    opa: OPA_OPTION,
  },
  notes:
    "SIGTERM or SIGINT (Ctrl-C): stop the sign-in page, the service and the issuer, let requests in flight finish.",
  exits: { ok: "stopped by a signal (a start-up failure exits 2)" },
} as const satisfies CommandSpec;
const VERIFIER = "portier-dev-pkce-verifier-0123456789-abcdefghijklmnopqrstuvwxyz";

/** The curl lines `portier dev` prints; callbackUrl is the sign-in page's /callback on the port it listens on. */
export function curlLines(issuerUrl: string, serviceUrl: string, callbackUrl: string): string[] {
  const challenge = createHash("sha256").update(VERIFIER).digest("base64url");
  const authorize =
    `${issuerUrl}/connect/authorize?response_type=code&client_id=portier-demo-web` +
    `&redirect_uri=${encodeURIComponent(callbackUrl)}` +
    "&scope=openid%20profile%20email%20apiclients&state=dev-state&nonce=dev-nonce" +
    `&code_challenge=${challenge}&code_challenge_method=S256&login_hint=enseignant.jeune`;
  const extract = `sed -E 's/.*"access_token":"([^"]+)".*/\\1/'`;
  const ask = (token: string, path: string) =>
    `curl -s -X POST ${serviceUrl}/decide -H 'content-type: application/json' ` +
    `-d "{\\"method\\":\\"GET\\",\\"path\\":\\"${path}\\",\\"token\\":\\"$${token}\\"}"; echo`;
  return [
    "# 1. a machine token (application flow, client credentials)",
    `MACHINE_TOKEN=$(curl -s -X POST ${issuerUrl}/connect/token -d grant_type=client_credentials ` +
      "-d client_id=portier-demo-machine -d client_secret=portier-demo-secret -d scope=apiclients " +
      `| ${extract})`,
    "# 2. a user token for enseignant.jeune (authorization code + PKCE; dev login_hint skips the login form)",
    `CODE=$(curl -s -o /dev/null -w '%{redirect_url}' '${authorize}' | sed -E 's/.*[?&]code=([^&]+).*/\\1/')`,
    `USER_TOKEN=$(curl -s -X POST ${issuerUrl}/connect/token -d grant_type=authorization_code ` +
      `-d client_id=portier-demo-web -d "code=$CODE" --data-urlencode redirect_uri=${callbackUrl} ` +
      `-d code_verifier=${VERIFIER} | ${extract})`,
    "# 3. ask Portier",
    ask("USER_TOKEN", "/v2/ORG001/elevesJeunes/42/absences"),
    ask("USER_TOKEN", "/v2/ORG001/elevesAdultes"),
    ask("USER_TOKEN", "/v2/ORG002/centres"),
    ask("MACHINE_TOKEN", "/v2/ORG001/elevesAdultes"),
    `curl -s -i ${serviceUrl}/forward-auth/nginx -H 'X-Original-Method: GET' -H 'X-Original-URI: /v1/roles' ` +
      `-H "Authorization: Bearer $USER_TOKEN"`,
  ];
}

/** A port option's value, its default (the table's, which the help shows) when not given. */
function portOf(name: "issuer-port" | "callback-port", raw: string | undefined): number {
  const text = raw ?? SPEC.options[name].default;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535) throw usageError(SPEC, `--${name}: must be 0..65535, got "${raw}"`);
  return port;
}

/** A team's project: its sample files, and its bundle built. */
async function teamFiles(project: Project, opa: string | undefined) {
  const sample = join(project.dir, "data", "sample");
  const clients = join(sample, "clients.json");
  const bundle = join(project.dir, "build", "bundle.tar.gz");
  // Built from the data as it is now, so that the service answers for the table being worked on.
  await buildBundle({ opa: opaPath(opa), projectDir: project.dir, workDir: join(project.dir, "build"), out: bundle });
  return {
    usersFile: join(sample, "users.json"),
    ...(existsSync(clients) ? { clientsFile: clients } : {}),
    directory: join(sample, "directory.json"),
  };
}

/** The lines to try against a team's project: a token for its first sample user, a decision. */
function teamLines(project: Project, usersFile: string, issuerUrl: string, serviceUrl: string): string[] {
  const user = loadUsers(usersFile)[0]!.preferred_username;
  const route = loadCatalog(join(project.dir, "data")).routes[0]!.template.replace(/\{[^}]+\}/g, "1");
  return [
    `# a user token for ${user} (authorization code + PKCE against the local issuer)`,
    `USER_TOKEN=$(portier token --project ${project.dir} --user ${user}` +
      `${issuerUrl === DEFAULT_ISSUER ? "" : ` --issuer ${issuerUrl}`})`,
    "# ask Portier",
    `curl -s -X POST ${serviceUrl}/decide -H 'content-type: application/json' ` +
      `-d "{\\"method\\":\\"GET\\",\\"path\\":\\"${route}\\",\\"token\\":\\"$USER_TOKEN\\"}"; echo`,
  ];
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  const project = resolveProject(values.project);
  const team = project.isPortier ? undefined : await teamFiles(project, values.opa);
  if (positionals.length > 0) throw usageError(SPEC, `unexpected argument "${positionals[0]}"`);
  // The issuer signs tokens the way the project reads them (its claims, scopes and application audience).
  const tokenShape = projectTokenShape(project);
  const issuerPort = portOf("issuer-port", values["issuer-port"]);
  const callbackPort = portOf("callback-port", values["callback-port"]);
  const stopped = untilSignal();
  let issuer;
  try {
    issuer = await startIssuer({
      port: issuerPort,
      host: "127.0.0.1",
      tokenShape,
      ...(team ? { usersFile: team.usersFile, ...(team.clientsFile ? { clientsFile: team.clientsFile } : {}) } : {}),
    });
  } catch (err) {
    const why =
      codeOf(err) === "EADDRINUSE"
        ? "the address is in use by another process; stop it or choose another --issuer-port"
        : messageOf(err);
    console.error(`portier dev: cannot start the issuer on 127.0.0.1:${issuerPort}: ${why}`);
    return EXIT.error;
  }
  let service: RunningService | undefined;
  try {
    const config = loadConfig(
      [
        ...(team ? ["--project", project.dir] : []),
        "--issuer",
        issuer.url,
        "--directory",
        team?.directory ?? DEFAULT_DIRECTORY_FILE,
        "--workers",
        "1",
        "--port",
        values.port ?? SPEC.options.port.default,
        "--log-level",
        values["log-level"] ?? SPEC.options["log-level"].default,
      ],
      {},
    );
    // Decision lines readable for a person at the terminal; `portier serve` keeps its JSON lines.
    service = await startService(config, { logDestination: readableLogDestination() });
    await service.verifier.ready();
  } catch (err) {
    await Promise.allSettled([service?.close(0), issuer.close()]);
    if (err instanceof ConfigError) {
      for (const p of err.problems) console.error(`portier dev: ${p}`);
      return 2;
    }
    console.error(`portier dev: ${messageOf(err)}`);
    return EXIT.error;
  }
  let web: RunningDevCallback;
  try {
    const live = service;
    web = await startDevCallback({
      port: callbackPort,
      issuerUrl: issuer.url,
      serviceUrl: service.url,
      scope: userSignInScope(tokenShape),
      access: accessOfToken(() => live.policy.engine, service.url),
    });
  } catch (err) {
    await Promise.allSettled([service.close(0), issuer.close()]);
    const why =
      codeOf(err) === "EADDRINUSE"
        ? "the address is in use by another process; stop it or choose another --callback-port"
        : messageOf(err);
    console.error(`portier dev: cannot start the callback server on 127.0.0.1:${callbackPort}: ${why}`);
    return EXIT.error;
  }
  console.log(JSON.stringify({ msg: "listening", url: service.url, issuer: issuer.url, signin: web.url }));
  console.log(`\nPortier dev: issuer ${issuer.url}, decision service ${service.url} (sample data, development only)\n`);
  console.log(`Open in a browser to sign in as a sample user and get a token with curl lines: ${web.url}\n`);
  const shapeLine = tokenShapeLine(tokenShape);
  if (shapeLine) console.log(`${shapeLine}\n`);
  console.log(
    (team
      ? teamLines(project, team.usersFile, issuer.url, service.url)
      : curlLines(issuer.url, service.url, web.redirectUri)
    ).join("\n"),
  );
  console.log("\nCtrl-C to stop.");
  await stopped;
  // The service first (it finishes requests in flight, which may need the issuer's keys), then the issuer.
  await web.close();
  await service.close();
  await issuer.close();
  return 0;
}
