/**
 * The --decision-log-* options: defaults, values read from flags and the environment, and the combinations
 * refused with the option's path (a token file without a collector, a token file beside Basic credentials, a
 * label Portier sets itself, a malformed label list), Basic credentials never echoed.
 */
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/service/config.js";
import { serveConfig } from "../helpers.js";

const BASE = ["--issuer", "https://auth.test.example", "--no-directory"];

function problems(args: string[]): string[] {
  try {
    serveConfig([...BASE, ...args]);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("--decision-log-* options", () => {
  it("default to no collector, the stdout line on, and bounded buffer, batch, period and timeout", () => {
    expect(serveConfig(BASE)).toMatchObject({
      decisionLogStdout: true,
      decisionLogBufferBytes: 16 * 1024 * 1024,
      decisionLogBatchBytes: 32768,
      decisionLogPeriodSeconds: 5,
      decisionLogTimeoutSeconds: 10,
      decisionLogProblemSeconds: 60,
    });
    expect(serveConfig(BASE).decisionLogUrl).toBeUndefined();
  });

  it("are read from flags and PORTIER_DECISION_LOG_* variables", () => {
    const config = serveConfig([...BASE, "--no-decision-log-stdout", "--decision-log-label", "env=prod,dc=eu-1"], {
      PORTIER_DECISION_LOG_URL: "https://collector.example/logs",
      PORTIER_DECISION_LOG_BUFFER_BYTES: "1048576",
    });
    expect(config).toMatchObject({
      decisionLogStdout: false,
      decisionLogLabel: "env=prod,dc=eu-1",
      decisionLogUrl: "https://collector.example/logs",
      decisionLogBufferBytes: 1048576,
    });
  });

  it("refuse combinations that cannot work, naming the option", () => {
    expect(problems(["--decision-log-token-file", "/tmp/t"])).toEqual([
      "config.decisionLogTokenFile: needs --decision-log-url (the collector to send the token to)",
    ]);
    expect(
      problems(["--decision-log-url", "https://u:secret@c.example/logs", "--decision-log-token-file", "/tmp/t"]),
    ).toEqual([
      "config.decisionLogTokenFile: cannot be combined with Basic credentials in --decision-log-url; drop one of them",
    ]);
    expect(problems(["--decision-log-url", "https://c.example/", "--decision-log-label", "a=1,id=x"])).toEqual([
      'config.decisionLogLabel: the label "id" is set by Portier (id, version); choose another name',
    ]);
    expect(problems(["--decision-log-label", "no-equals-sign"])[0]).toMatch(/^config\.decisionLogLabel: must match/);
    expect(problems(["--decision-log-buffer-bytes", "10"])[0]).toMatch(
      /^config\.decisionLogBufferBytes: must be >= 65536/,
    );
  });

  it("never echo Basic credentials of a refused URL", () => {
    const [problem] = problems(["--decision-log-url", "ftp://u:secret@c.example/logs"]);
    expect(problem).toMatch(/^config\.decisionLogUrl: must match/);
    expect(problem).not.toContain("secret");
  });
});
