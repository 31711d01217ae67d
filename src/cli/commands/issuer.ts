/**
 * `portier issuer`: runs the local identity issuer (spec 4.1) on loopback for development and demos, minting
 * tokens in the shape the project reads (its data/project.json claims, scopes and application audience) and, for
 * a team's project, signing in its sample users. It is not a production identity provider and says so when it starts.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { startIssuer, DEFAULT_CLIENTS_FILE, DEFAULT_USERS_FILE } from "../../issuer/index.js";
import { EXIT } from "../exit-codes.js";
import { PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { projectTokenShape, tokenShapeLine } from "../project-token-shape.js";
import { resolveProject } from "../../toolchain/project.js";
import { untilSignal } from "../shutdown.js";
import { messageOf } from "../../errors/caught.js";

export const SPEC = {
  name: "portier issuer",
  summary: "Local OpenID Connect issuer for development only (not for production).",
  options: {
    project: PROJECT_OPTION,
    port: { type: "string", value: "N", description: "port to listen on (0 = any free port)", default: "9400" },
    host: { type: "string", value: "H", description: "address to bind", default: "127.0.0.1 (loopback)" },
    "issuer-url": {
      type: "string",
      value: "URL",
      description: "iss of the tokens and base of the endpoints",
      default: "http://HOST:PORT",
    },
    users: {
      type: "string",
      value: "FILE",
      description: "sample users",
      default: "the project's data/sample/users.json, else Portier's",
    },
    clients: {
      type: "string",
      value: "FILE",
      description: "registered clients",
      default: "the project's data/sample/clients.json, else Portier's",
    },
    "access-ttl": { type: "string", value: "S", description: "access token lifetime in seconds", default: "3600" },
    "id-ttl": { type: "string", value: "S", description: "ID token lifetime in seconds", default: "300" },
    "code-ttl": { type: "string", value: "S", description: "authorization code lifetime in seconds", default: "300" },
    "no-dev-login": {
      type: "boolean",
      description: "refuse password-less sign-in by login_hint",
      default: "dev login on",
    },
  },
  notes: "environment: LOG_LEVEL (default info). SIGTERM or SIGINT stops it.",
  exits: { ok: "stopped by a signal (a start-up failure exits 2)" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length > 0) throw usageError(SPEC, `unexpected argument "${positionals[0]}"`);

  let port: number;
  let ttls: { accessTtlSec?: number; idTtlSec?: number; codeTtlSec?: number };
  try {
    port = integer("--port", values.port, Number(SPEC.options.port.default), 0, 65535);
    ttls = {
      accessTtlSec: integer(
        "--access-ttl",
        values["access-ttl"],
        Number(SPEC.options["access-ttl"].default),
        1,
        31_536_000,
      ),
      idTtlSec: integer("--id-ttl", values["id-ttl"], Number(SPEC.options["id-ttl"].default), 1, 31_536_000),
      codeTtlSec: integer("--code-ttl", values["code-ttl"], Number(SPEC.options["code-ttl"].default), 1, 3600),
    };
  } catch (err) {
    throw usageError(SPEC, messageOf(err));
  }

  const host = values.host ?? "127.0.0.1";
  const logger = pino({ name: "portier-issuer", level: process.env["LOG_LEVEL"] ?? "info" });
  let running;
  let usersFile: string;
  let clientsFile: string;
  let shapeLine: string | undefined;
  try {
    const project = resolveProject(values.project);
    const sample = (name: string) => {
      const file = join(project.dir, "data", "sample", name);
      return !project.isPortier && existsSync(file) ? file : undefined;
    };
    usersFile = values.users ?? sample("users.json") ?? DEFAULT_USERS_FILE;
    clientsFile = values.clients ?? sample("clients.json") ?? DEFAULT_CLIENTS_FILE;
    const tokenShape = projectTokenShape(project);
    shapeLine = tokenShapeLine(tokenShape);
    running = await startIssuer({
      tokenShape,
      port,
      host,
      ...(values["issuer-url"] !== undefined ? { issuerUrl: values["issuer-url"] } : {}),
      usersFile,
      clientsFile,
      devMode: !values["no-dev-login"],
      logger,
      ...ttls,
    });
  } catch (err) {
    process.stderr.write(`portier issuer: cannot start: ${messageOf(err)}\n`);
    return EXIT.error;
  }

  const { issuer, url } = running;
  process.stdout.write(
    [
      "Portier local issuer: FOR DEVELOPMENT ONLY, NOT FOR PRODUCTION " +
        "(sample users, public dev secrets, in-memory keys).",
      `Issuer URL: ${url}`,
      `Discovery:  ${url}/.well-known/openid-configuration`,
      `Users: ${issuer.users.length} from ${usersFile} (sample users: see its $comment for the dev password)`,
      `Clients: ${issuer.clients.map((c) => c.client_id).join(", ")} from ${clientsFile}`,
      shapeLine ?? "",
      issuer.devMode
        ? "Dev mode: login_hint=<username> on /connect/authorize signs that user in without a password."
        : "Dev mode off.",
      isLoopback(host) ? "" : `WARNING: listening on ${host}, not loopback.`,
    ]
      .filter(Boolean)
      .join("\n") + "\n",
  );

  await untilSignal();
  await running.close();
  return 0;
}

function integer(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${flag} must be an integer, got ${raw}`);
  const value = Number(raw);
  if (value < min || value > max) throw new Error(`${flag} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function isLoopback(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "localhost" || host.startsWith("127.");
}
