/**
 * instructions.ts's reading of callgrind dumps: self instructions by function and by what they were spent on,
 * a call's inclusive cost not counted twice.
 */
import { describe, expect, it } from "vitest";
import { CATEGORIES, categoryOf, readCallgrind } from "./instructions.js";

// The shape callgrind writes with --compress-strings=no --compress-pos=no (one event, Ir).
const DUMP = `# callgrind format
version: 1
creator: callgrind-3.19.0
events: Ir
summary: 710

ob=/usr/bin/node
fl=???
fn=Builtins_LoadIC
0 100
cob=/usr/bin/node
cfn=v8::internal::compiler::GraphReducer::ReduceTop()
calls=2 0
0 500
fn=v8::internal::compiler::GraphReducer::ReduceTop()
0 300
fn=v8::internal::Scavenger::ScavengeObject(v8::internal::FullHeapObjectSlot)
0 40

ob=???
fn=0x000020b72b199400
0 200
+2 50
fn=0x000020b72b199400'2
0 10
ob=/usr/lib/x86_64-linux-gnu/libc.so.6
fn=__memmove_avx_unaligned_erms
0 10

totals: 710
`;

describe("readCallgrind", () => {
  const c = readCallgrind(DUMP);

  it("reads the total and each function's self instructions, skipping the cost line after calls=", () => {
    expect(c.total).toBe(710);
    expect(c.byFunction.get("Builtins_LoadIC")).toBe(100);
    expect(c.byFunction.get("v8::internal::compiler::GraphReducer::ReduceTop()")).toBe(300);
    expect(c.byFunction.get("(JIT code)")).toBe(260);
    expect([...c.byFunction.values()].reduce((a, b) => a + b, 0)).toBe(c.total);
  });

  it("splits them into the categories, which add up to the total", () => {
    expect(Object.fromEntries(c.byCategory)).toEqual({
      [CATEGORIES[0]]: 300,
      [CATEGORIES[1]]: 40,
      [CATEGORIES[2]]: 100,
      [CATEGORIES[3]]: 260,
      [CATEGORIES[4]]: 10,
    });
  });
});

describe("categoryOf", () => {
  it.each([
    ["/usr/bin/node", "v8::internal::maglev::MaglevGraphBuilder::Build()", CATEGORIES[0]],
    ["/usr/bin/node", "v8::internal::MarkCompactCollector::CollectGarbage()", CATEGORIES[1]],
    ["/usr/bin/node", "llhttp__internal_execute", CATEGORIES[2]],
    ["???", "(JIT code)", CATEGORIES[3]],
    ["/usr/lib/x86_64-linux-gnu/libc.so.6", "malloc", CATEGORIES[4]],
    ["/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", "operator new(unsigned long)", CATEGORIES[5]],
  ])("%s %s -> %s", (ob, fn, category) => {
    expect(categoryOf(ob, fn)).toBe(category);
  });
});
