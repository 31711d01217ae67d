/**
 * The one traceparent parser: the ids of a well-formed value, nothing for anything else (upper case, wrong
 * lengths, missing parts, extra text), as the request trace and the decision-log event read it.
 */
import { describe, expect, it } from "vitest";
import { parseTraceparent } from "../../../src/service/decide/traceparent.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("parseTraceparent", () => {
  it("reads the trace id and the parent's span id", () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-01`)).toEqual({ traceId: TRACE, spanId: SPAN });
  });

  it.each([
    ["upper case", `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ["a short trace id", `00-${TRACE.slice(1)}-${SPAN}-01`],
    ["a long span id", `00-${TRACE}-${SPAN}0-01`],
    ["no flags", `00-${TRACE}-${SPAN}`],
    ["text after it", `00-${TRACE}-${SPAN}-01 x`],
    ["not hex", `00-${TRACE.replace("4", "g")}-${SPAN}-01`],
    ["empty", ""],
  ])("refuses %s", (_what, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});
