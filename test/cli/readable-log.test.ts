/**
 * `portier dev` prints the service's log lines for a person: decisions as one readable line each.
 */
import { describe, expect, it } from "vitest";
import { readableLine, readableLogDestination } from "../../src/cli/readable-log.js";

const TIME = Date.UTC(2026, 10, 23, 9, 15, 30);

describe("readableLine", () => {
  it.each([
    [
      {
        level: 30,
        time: TIME,
        event: "decision",
        method: "GET",
        path: "/v2/ORG001/elevesJeunes/42/absences",
        route: "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
        flow: "accessCode",
        sub: "u-1",
        roles: ["enseignant_jeune"],
        allow: true,
        reason: "allowed",
        message: "user role enseignant_jeune is allowed",
      },
      "09:15:30 ALLOW GET /v2/ORG001/elevesJeunes/42/absences  " +
        "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences  accessCode u-1 [enseignant_jeune] -> allowed: " +
        "user role enseignant_jeune is allowed",
    ],
    [
      {
        level: 30,
        time: TIME,
        event: "decision",
        method: "GET",
        path: null,
        raw_path: "/v1/%2e%2e/x",
        route: null,
        flow: null,
        sub: null,
        client_id: "machine",
        roles: [],
        allow: false,
        reason: "path_invalid",
        message: "dot segment",
      },
      "09:15:30 DENY  GET /v1/%2e%2e/x (invalid)  no flow machine -> path_invalid: dot segment",
    ],
    [
      {
        level: 30,
        time: TIME,
        event: "decision",
        method: "GET",
        path: "/v1/roles",
        route: null,
        flow: null,
        sub: "u-1",
        roles: [],
        allow: false,
        reason: "policy_error",
        message: "the policy could not make a decision",
        detail: "RuntimeError: unreachable",
      },
      "09:15:30 DENY  GET /v1/roles  no flow u-1 -> policy_error: the policy could not make a decision " +
        "(RuntimeError: unreachable)",
    ],
    [
      {
        level: 50,
        time: TIME,
        event: "policy_refused",
        msg: "policy could not be loaded",
        error: "bundle.tar.gz: not a gzip",
      },
      "09:15:30 ERROR policy could not be loaded (policy_refused): bundle.tar.gz: not a gzip",
    ],
  ])("%j", (line, text) => {
    expect(readableLine(JSON.stringify(line))).toBe(text);
  });

  it("keeps a line that is not JSON, and writes one line per record", () => {
    expect(readableLine("plain text")).toBe("plain text");
    let out = "";
    readableLogDestination((t) => (out += t)).write(
      `${JSON.stringify({ level: 40, time: TIME, msg: "a" })}\n` +
        `${JSON.stringify({ level: 30, time: TIME, msg: "b" })}\n`,
    );
    expect(out).toBe("09:15:30 WARN  a\n09:15:30 INFO  b\n");
  });
});
