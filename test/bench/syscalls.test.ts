/**
 * The floor's syscall counter reads strace's summary table as strace prints it: every call with its count, the
 * errors column when there is one, the total row left out.
 */
import { describe, expect, it } from "vitest";
import { parseStraceSummary } from "./syscalls.js";

const SUMMARY = `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 41.20    0.512345          51      9989           writev
 30.10    0.374000          34     10799         6 read
 20.00    0.248000          59      4160       151 futex
  0.01    0.000100         100         1           accept4
------ ----------- ----------- --------- --------- ----------------
100.00    1.234445          49     24949       157 total
`;

describe("parseStraceSummary", () => {
  it.each([
    ["writev", [9989, 0]],
    ["read", [10799, 6]],
    ["futex", [4160, 151]],
    ["accept4", [1, 0]],
  ])("%s: calls and errors", (name, counts) => {
    expect(parseStraceSummary(SUMMARY).get(name)).toEqual(counts);
  });

  it("leaves out the header, the rules and the total row", () => {
    expect([...parseStraceSummary(SUMMARY).keys()]).toEqual(["writev", "read", "futex", "accept4"]);
  });
});
