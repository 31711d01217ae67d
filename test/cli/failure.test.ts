/**
 * What `portier` does with an error that reaches main: a help request exits 0, chosen by class (instanceof), so an
 * error that merely carries the code string "help" is not taken for one; every other error exits 2 (no answer).
 */
import { describe, expect, it } from "vitest";
import { HelpRequest, UsageError } from "../../src/cli/args.js";
import { failureOf, type Failure } from "../../src/cli/failure.js";
import { PolicyEvaluationError } from "../../src/engine/errors.js";
import { StartError } from "../../src/service/start-service.js";

describe("failureOf", () => {
  const cases: [string, unknown, Failure][] = [
    [
      "a HelpRequest: the help on stdout, exit 0",
      new HelpRequest("usage: portier matrix [options]"),
      { exitCode: 0, stdout: "usage: portier matrix [options]" },
    ],
    ["a UsageError: exit 2", new UsageError("missing METHOD"), { exitCode: 2, stderr: "portier: missing METHOD" }],
    [
      "another PortierError: exit 2 (no answer)",
      new StartError("cannot listen on 127.0.0.1:1"),
      { exitCode: 2, stderr: "portier: cannot listen on 127.0.0.1:1" },
    ],
    [
      "a PortierError with detail: the detail on its own line",
      new PolicyEvaluationError("RuntimeError: unreachable"),
      { exitCode: 2, stderr: "portier: the policy could not make a decision\n  detail: RuntimeError: unreachable" },
    ],
    ["a plain Error: exit 2", new Error("boom"), { exitCode: 2, stderr: "portier: boom" }],
    [
      'a plain Error with code "usage" (not a UsageError): exit 2',
      Object.assign(new Error("bad"), { code: "usage" }),
      { exitCode: 2, stderr: "portier: bad" },
    ],
    [
      'an object with code "help" and a text (not a HelpRequest): exit 2, not 0',
      { code: "help", text: "usage", message: "help requested" },
      { exitCode: 2, stderr: "portier: help requested" },
    ],
    ["a thrown string: exit 2", "went wrong", { exitCode: 2, stderr: "portier: went wrong" }],
  ];
  it.each(cases)("%s", (_name, err, failure) => {
    expect(failureOf(err)).toEqual(failure);
  });
});
