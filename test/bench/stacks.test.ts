/**
 * `make profile`'s stack handling: perf script text and V8 CPU profiles fold into the stacks flamegraph.pl reads,
 * frames in one short form, and each stack lands in the cost category its rule table says.
 */
import { describe, expect, it } from "vitest";
import {
  CATEGORIES,
  categorise,
  costTable,
  foldCpuProfile,
  foldHeapProfile,
  foldedText,
  foldPerfScript,
  mergeFolded,
  normaliseFrame,
  shortFile,
  type CpuProfile,
  type HeapProfile,
} from "./stacks.js";

const PERF = `node 23187  9762.473694:    1001001 cpu-clock: 
	         15ac607 Builtins_FunctionPrototypeHasInstance+0x147 (/usr/bin/node)
	    7f776786da5f JS:^onParserExecuteCommon node:_http_server:905:31+0x5f (/tmp/perf-23187.map)
	          7bbbe6 node::SpinEventLoopInternal+0x156 (/usr/bin/node)

node 23187  9762.476893:    1001001 cpu-clock: 
	ffffffff81b69c66 copy_iovec_from_user+0x26 ([kernel.kallsyms])
	           fde9d __GI___writev+0x4d (/usr/lib/x86_64-linux-gnu/libc.so.6)
	    7f7767878b92 JS:*sendGateway file:///work/wt-x/dist/service/fast-adapters.js:34:21+0xdd2 (/tmp/perf-23187.map)
	          7bbbe6 node::SpinEventLoopInternal+0x156 (/usr/bin/node)

node 23187  9762.477893:    1001001 cpu-clock: 
	         15ac607 Builtins_FunctionPrototypeHasInstance+0x147 (/usr/bin/node)
	    7f776786da5f JS:*onParserExecuteCommon node:_http_server:905:31+0x1ff (/tmp/perf-23187.map)
	          7bbbe6 node::SpinEventLoopInternal+0x156 (/usr/bin/node)
`;

describe("foldPerfScript", () => {
  it("folds samples root first, offsets and JIT tiers dropped, so the same frame merges", () => {
    const folded = foldPerfScript(PERF);
    expect([...folded]).toEqual([
      [
        "node::SpinEventLoopInternal;onParserExecuteCommon node:_http_server:905;Builtins_FunctionPrototypeHasInstance",
        2,
      ],
      [
        "node::SpinEventLoopInternal;sendGateway " +
          "dist/service/fast-adapters.js:34;__GI___writev;copy_iovec_from_user_[k]",
        1,
      ],
    ]);
    expect(foldedText(folded).split("\n")[0]).toMatch(/HasInstance 2$/);
  });

  it("keeps the last sample without a trailing blank line, and a sample with no frames is no stack", () => {
    expect(foldPerfScript("node 1 1.0: 1 cpu-clock:\n\t  1 main+0x1 (/usr/bin/node)").get("main")).toBe(1);
    expect(foldPerfScript("node 1 1.0: 1 cpu-clock:\n\n").size).toBe(0);
  });
});

describe("mergeFolded", () => {
  it("adds the samples of the same stack and keeps the others", () => {
    const into = new Map([
      ["a;b", 2],
      ["a", 1],
    ]);
    expect(
      Object.fromEntries(
        mergeFolded(
          into,
          new Map([
            ["a;b", 3],
            ["c", 4],
          ]),
        ),
      ),
    ).toEqual({ "a;b": 5, a: 1, c: 4 });
  });
});

describe("normaliseFrame", () => {
  it.each([
    ["JS:*decide file:///work/wt-a/dist/engine/x.js:12:3", "/tmp/perf-1.map", "decide dist/engine/x.js:12"],
    ["JS:~ /tmp/portier-base-abc/dist/service/a.js:5:1", "/tmp/perf-1.map", "(anonymous) dist/service/a.js:5"],
    ["JS:^get headers node:_http_incoming:109:14", "/tmp/perf-1.map", "get headers node:_http_incoming:109"],
    ["JS:opa_eval-48-turbofan", "/tmp/perf-1.map", "opa_eval-48-turbofan"],
    ["tcp_sendmsg+0x1f", "[kernel.kallsyms]", "tcp_sendmsg_[k]"],
    ["[unknown]", "/tmp/perf-77.map", "[unknown] (jit)"],
    ["[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[unknown] (libc.so.6)"],
    ["std::map<a;b>::find+0x10", "/usr/bin/node", "std::map<a:b>::find"],
  ])("%s (%s) -> %s", (sym, dso, want) => {
    expect(normaliseFrame(sym, dso)).toBe(want);
  });

  it("makes a dependency's path relative to node_modules", () => {
    expect(shortFile("/work/wt-a/node_modules/pino/lib/proto.js")).toBe("node_modules/pino/lib/proto.js");
    expect(shortFile("node:net")).toBe("node:net");
  });
});

describe("foldCpuProfile", () => {
  const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)"), children: [2, 3, 4] },
      { id: 2, callFrame: frame("(idle)") },
      { id: 3, callFrame: frame("(garbage collector)") },
      { id: 4, callFrame: frame("listener", "file:///w/dist/service/fast-adapters.js", 88), children: [5] },
      { id: 5, callFrame: frame("", "file:///w/node_modules/pino/lib/proto.js", 205) },
    ],
    samples: [2, 2, 3, 5, 5, 4],
  };

  it("folds by sample with 1-based lines, leaves idle out and keeps the collector", () => {
    expect(Object.fromEntries(foldCpuProfile(profile))).toEqual({
      "(garbage collector)": 1,
      "listener dist/service/fast-adapters.js:89;(anonymous) node_modules/pino/lib/proto.js:206": 2,
      "listener dist/service/fast-adapters.js:89": 1,
    });
  });
});

describe("foldHeapProfile", () => {
  const frame = (functionName: string, url = "", lineNumber = -1) => ({ functionName, url, lineNumber });
  const profile: HeapProfile = {
    head: {
      id: 1,
      callFrame: frame("(root)"),
      children: [
        {
          id: 2,
          callFrame: frame("listener", "file:///w/dist/service/http/listener.js", 5),
          children: [{ id: 3, callFrame: frame("", "file:///w/node_modules/pino/lib/tools.js", 143) }],
        },
        { id: 4, callFrame: frame("(V8 API)") },
      ],
    },
    samples: [
      { nodeId: 3, size: 120 },
      { nodeId: 3, size: 40 },
      { nodeId: 2, size: 64 },
      { nodeId: 4, size: 16 },
    ],
  };

  it("folds by bytes on the allocating stack, frames named as in CPU profiles, the root left out", () => {
    expect(Object.fromEntries(foldHeapProfile(profile))).toEqual({
      "listener dist/service/http/listener.js:6;(anonymous) node_modules/pino/lib/tools.js:144": 160,
      "listener dist/service/http/listener.js:6": 64,
      "(V8 API)": 16,
    });
  });

  it("gives the cost table bytes by category (a pino frame is the log line)", () => {
    const rows = costTable(foldHeapProfile(profile), 240);
    expect(rows.find((r) => r.category === "log line")?.us).toBe(160);
  });
});

describe("categorise", () => {
  const root = ["node::SpinEventLoopInternal", "parserOnHeadersComplete node:_http_common:71"];
  const listener = "(anonymous) dist/service/fast-adapters.js:89";
  it.each([
    [
      [...root, listener, "write node_modules/pino/lib/proto.js:206", "v8::internal::JsonStringifier::Serialize"],
      "log line",
    ],
    [[...root, listener, "jsonBytes dist/engine/policy-instance.js:16", "v8::internal::Heap::CollectGarbage"], "GC"],
    [
      [...root, listener, "sendGateway dist/service/fast-adapters.js:34", "__GI___writev", "tcp_sendmsg_[k]"],
      "kernel: TCP and wake-ups",
    ],
    [
      [
        ...root,
        listener,
        "evaluate node_modules/@open-policy-agent/opa-wasm/src/opa.js:356",
        "v8::internal::JsonParser<unsigned char>::ParseJson",
      ],
      "wasm evaluation",
    ],
    [[...root, listener, "opa_value_hash-198-turbofan"], "wasm evaluation"],
    [[...root, listener, "allowHeaders dist/service/gateway-headers.js:71"], "answer (writing)"],
    [[...root, listener, "readForwardAuth dist/service/gateway-headers.js:108"], "header and body reading"],
    [[...root, listener, "readForwardAuth dist/service/http/gateway-headers.js:108"], "header and body reading"],
    [[...root, listener, "readBody dist/service/http/read-body.js:20"], "header and body reading"],
    [[...root, listener, "sendGatewayAnswer dist/service/http/write-answer.js:18"], "answer (writing)"],
    [[...root, listener, "(anonymous) dist/service/http/write-answer.js:25"], "answer (writing)"],
    [[...root, listener, "decisionInput dist/service/decide/input.js:10"], "input building"],
    [[...root, listener, "get headers node:_http_incoming:109"], "header and body reading"],
    [[...root, listener, "verifyCached dist/auth/verified-token-cache.js:40"], "token check"],
    [[...root, listener, "findSubject dist/service/decide/subject.js:40"], "subject (directory, roles)"],
    [[...root, listener, "tokenFacts dist/engine/token-facts.js:9"], "input building"],
    [[...root, listener, "count dist/service/metrics.js:50"], "metrics"],
    [[...root, listener], "Portier, other"],
    [
      [...root, "(anonymous) test/bench/same-shaped-server.mjs:25", "send test/bench/same-shaped-server.mjs:15"],
      "answer (writing)",
    ],
    [
      [
        ...root,
        "(anonymous) test/bench/same-shaped-server.mjs:25",
        "v8::internal::JsonParser<unsigned char>::ParseJson",
      ],
      "header and body reading",
    ],
    [["start_thread", "v8::internal::compiler::GraphReducer::ReduceNode", "malloc"], "JIT compilation (V8)"],
    [[...root, "Builtins_FunctionPrototypeHasInstance"], "HTTP parsing (node:http, llhttp)"],
    [["[unknown] (libc.so.6)", "malloc"], "other (node, libuv, unattributed)"],
    [[], "other (node, libuv, unattributed)"],
  ])("%j -> %s", (frames, want) => {
    expect(categorise(frames)).toBe(want);
  });
});

describe("costTable", () => {
  it("splits the CPU per request by the samples' shares, every category in order", () => {
    const folded = new Map([
      ["a;opa_eval-48-turbofan", 3],
      ["a;write node_modules/pino/lib/proto.js:206", 1],
    ]);
    const rows = costTable(folded, 200);
    expect(rows.map((r) => r.category)).toEqual([...CATEGORIES]);
    expect(rows.find((r) => r.category === "wasm evaluation")).toEqual({
      category: "wasm evaluation",
      samples: 3,
      share: 0.75,
      us: 150,
    });
    expect(rows.find((r) => r.category === "log line")!.us).toBe(50);
    expect(rows.reduce((n, r) => n + r.us, 0)).toBe(200);
  });

  it("gives zeros, not NaN, without samples", () => {
    expect(costTable(new Map(), 100).every((r) => r.us === 0 && r.share === 0)).toBe(true);
  });
});
