/**
 * Stack samples for `make profile` (test/bench/profile.ts): `perf script` text or a V8 `.cpuprofile` folded into
 * "root;...;leaf count" lines (the input of flamegraph.pl), each frame in one short form (JS: `name file:line`,
 * file relative to the tree; native: the symbol; kernel: the symbol and `_[k]`), and every sample put in one
 * cost category by a small rule table, so that a server's CPU per request can be split by what it was spent on.
 */

/** The cost categories, in the order the table prints them. */
export const CATEGORIES = [
  "kernel: TCP and wake-ups",
  "HTTP parsing (node:http, llhttp)",
  "header and body reading",
  "token check",
  "subject (directory, roles)",
  "input building",
  "wasm evaluation",
  "answer (writing)",
  "log line",
  "metrics",
  "GC",
  "JIT compilation (V8)",
  "Portier, other",
  "other (node, libuv, unattributed)",
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface Rule {
  category: Category;
  /** Tested on one frame in its short form (see normaliseFrame). */
  frame: RegExp;
}

/** Anywhere in a stack: the sample is the garbage collector's, whatever it interrupted. */
export const GC_FRAME = new RegExp(
  String.raw`\(garbage collector\)|v8::internal::(Heap|Scavenger\w*|\w*MarkCompact\w*|Sweeper|` +
    String.raw`ConcurrentMarking|` +
    String.raw`IncrementalMarking|GCTracer|MemoryAllocator|MinorMS\w*)::`,
);

/**
 * Walking a stack from the leaf to the root, the first frame that matches a rule (rules in this order) gives the
 * category: a library's frame under Portier's code counts for the library's stage (JSON.stringify under pino is
 * the log line). A kernel frame at the leaf makes the sample the kernel's (the writev of the answer included).
 * File rules name both layouts of src/service (before and after issue 18's src/service/http/), so that a base
 * commit is categorised like this tree.
 */
export const RULES: Rule[] = [
  {
    category: "log line",
    frame: /node_modules\/(pino|sonic-boom|thread-stream)\/|bounded-log-destination|decision-log\.js/,
  },
  {
    category: "metrics",
    frame: /node_modules\/prom-client\/|dist\/service\/(metrics|decision-counts|cluster-metrics)\.js/,
  },
  {
    category: "wasm evaluation",
    frame: /wasm-function|[Ww]asm|node_modules\/@open-policy-agent\/|dist\/engine\/policy-instance\.js|\bopa_\w+/,
  },
  { category: "token check", frame: /dist\/auth\/|node_modules\/jose\// },
  { category: "subject (directory, roles)", frame: /dist\/service\/decide\/subject\.js|dist\/directory\// },
  { category: "input building", frame: /dist\/engine\/|dist\/service\/decide\/(evaluate|input)\.js/ },
  {
    category: "answer (writing)",
    frame: new RegExp(
      String.raw`^(sendJson|sendGateway\w*|answerWith|publicAnswer|allowHeaders|denyHeaders|denyBody|` +
        String.raw`headerValue|send) |` +
        String.raw`dist\/service\/(decide\/answer|http\/write-answer)\.js|node:_http_outgoing|` +
        String.raw`node:internal\/streams\/writable|^\S*(_writev|_writeGeneric|writevGeneric|writeGeneric|` +
        String.raw`handleWriteReq) node:(net|internal\/stream_base_commons)|StreamBase::Write|` +
        String.raw`LibuvStreamWrap::DoTryWrite|uv_try_write|__GI___writev|writeHead`,
    ),
  },
  {
    category: "header and body reading",
    frame:
      /dist\/service\/(http\/)?(gateway-headers|read-body|decide-body)\.js|node:_http_incoming|same-shaped-server\.mjs/,
  },
  {
    category: "HTTP parsing (node:http, llhttp)",
    frame: /node:_http_common|node:_http_server|llhttp|node::\(anonymous namespace\)::Parser|onParserExecute/,
  },
  {
    category: "JIT compilation (V8)",
    frame: new RegExp(
      String.raw`v8::internal::(compiler|maglev|baseline)::|v8::internal::(Compiler|` +
        String.raw`OptimizingCompileDispatcher|Parser|` +
        String.raw`Deoptimizer)::`,
    ),
  },
  { category: "Portier, other", frame: /^\S* ?dist\/|\bdist\// },
];

const KERNEL = "_[k]";

/**
 * One frame in short form. `sym` is what perf prints (with its +0x offset, or `JS:*name file:line:col` from
 * --perf-basic-prof's map) or a cpuprofile's `name url:line`; `dso` the object it comes from.
 */
export function normaliseFrame(sym: string, dso: string): string {
  let s = sym.replace(/\+0x[0-9a-f]+$/, "").replace(/;/g, ":");
  if (dso === "[kernel.kallsyms]") return `${s}${KERNEL}`;
  if (s === "[unknown]") return `[unknown] (${dso.replace(/^.*\//, "").replace(/^perf-\d+\.map$/, "jit")})`;
  const js = /^JS:[*^~+-]?(.*?)\s*(\S+):(\d+):\d+$/.exec(s);
  if (js) s = `${js[1] || "(anonymous)"} ${shortFile(js[2]!)}:${js[3]}`;
  else if (s.startsWith("JS:")) s = s.slice(3).replace(/^[*^~+-]/, "");
  return s;
}

/** A script's path or file URL relative to the tree it runs from (dist/, node_modules/, test/), or as it is. */
export function shortFile(file: string): string {
  return file.replace(/^(file:\/\/)?\/.*?\/(dist|node_modules|test)\//, "$2/");
}

/** Folded stacks: "root;...;leaf" -> samples. */
export type Folded = Map<string, number>;

function add(folded: Folded, frames: string[], n = 1): void {
  if (frames.length === 0) return;
  const key = frames.join(";");
  folded.set(key, (folded.get(key) ?? 0) + n);
}

/** `perf script` output (default fields, call graphs) folded; perf prints the leaf first. */
export function foldPerfScript(text: string): Folded {
  const folded: Folded = new Map();
  let frames: string[] = [];
  let inSample = false;
  for (const line of text.split("\n")) {
    if (line.trim() === "") {
      if (inSample) add(folded, frames.reverse());
      frames = [];
      inSample = false;
      continue;
    }
    if (!/^\s/.test(line)) {
      inSample = true; // the sample's header: comm pid time: period event:
      continue;
    }
    const m = /^\s+[0-9a-f]+ (.*) \(([^()]*)\)$/.exec(line);
    if (m) frames.push(normaliseFrame(m[1]!, m[2]!));
  }
  if (inSample) add(folded, frames.reverse());
  return folded;
}

/** Where a V8 profile's node runs (CPU and heap profiles alike); lineNumber is 0-based. */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** The parts of a V8 CPU profile (node --cpu-prof) that folding reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
}

/** A V8 profile's frame as a folded stack names it: "function file:line" (1-based), no ";" inside. */
function frameName({ functionName, url, lineNumber }: CallFrame): string {
  const name = url ? `${functionName || "(anonymous)"} ${shortFile(url)}:${lineNumber + 1}` : functionName;
  return name.replace(/;/g, ":");
}

/** A `.cpuprofile` folded by sample; idle samples are left out (they are not CPU), the root frame too. */
export function foldCpuProfile(profile: CpuProfile): Folded {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const paths = new Map<number, string[] | null>();
  const pathOf = (id: number): string[] | null => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    let path: string[] | null = null;
    if (node && node.callFrame.functionName !== "(idle)") {
      const up = parent.get(id);
      if (up === undefined)
        path = []; // (root)
      else {
        const above = pathOf(up);
        path = above === null ? null : [...above, frameName(node.callFrame)];
      }
    }
    paths.set(id, path);
    return path;
  };
  const folded: Folded = new Map();
  for (const id of profile.samples) {
    const path = pathOf(id);
    if (path) add(folded, path);
  }
  return folded;
}

/** The parts of a V8 sampling heap profile (HeapProfiler.stopSampling, a `.heapprofile`) that folding reads. */
export interface HeapProfile {
  head: HeapProfileNode;
  samples: { size: number; nodeId: number }[];
}
interface HeapProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: HeapProfileNode[];
}

/**
 * A sampling heap profile folded by bytes: each sample's size on the stack that allocated it, frames named as
 * foldCpuProfile names them (so the same rules categorise allocations), the root frame left out.
 */
export function foldHeapProfile(profile: HeapProfile): Folded {
  const paths = new Map<number, string[]>();
  const walk = (node: HeapProfileNode, path: string[]): void => {
    paths.set(node.id, path);
    for (const child of node.children ?? []) walk(child, [...path, frameName(child.callFrame)]);
  };
  walk(profile.head, []);
  const folded: Folded = new Map();
  for (const s of profile.samples) add(folded, paths.get(s.nodeId) ?? ["(unknown)"], s.size);
  return folded;
}

/** The category of one stack (root first). */
export function categorise(frames: string[], rules: Rule[] = RULES): Category {
  if (frames.some((f) => GC_FRAME.test(f))) return "GC";
  if (frames.length > 0 && frames[frames.length - 1]!.endsWith(KERNEL)) return "kernel: TCP and wake-ups";
  for (let i = frames.length - 1; i >= 0; i--) {
    const f = frames[i]!;
    if (f.endsWith(KERNEL)) continue;
    const rule = rules.find((r) => r.frame.test(f));
    if (rule) return rule.category;
  }
  return "other (node, libuv, unattributed)";
}

export interface CostRow {
  category: Category;
  samples: number;
  share: number;
  /** CPU microseconds per request: the share of the samples times the measured CPU per request. */
  us: number;
}

/** Samples per category, as shares of all samples and of `cpuUsPerRequest`; every category, in order. */
export function costTable(folded: Folded, cpuUsPerRequest: number, rules: Rule[] = RULES): CostRow[] {
  const counts = new Map<Category, number>(CATEGORIES.map((c) => [c, 0]));
  let total = 0;
  for (const [stack, n] of folded) {
    const c = categorise(stack.split(";"), rules);
    counts.set(c, counts.get(c)! + n);
    total += n;
  }
  return CATEGORIES.map((category) => {
    const samples = counts.get(category)!;
    const share = total > 0 ? samples / total : 0;
    return { category, samples, share, us: share * cpuUsPerRequest };
  });
}

/** Adds `more`'s samples into `into` (rounds of the same server and load). */
export function mergeFolded(into: Folded, more: Folded): Folded {
  for (const [stack, n] of more) into.set(stack, (into.get(stack) ?? 0) + n);
  return into;
}

/** flamegraph.pl's input. */
export function foldedText(folded: Folded): string {
  return [...folded].map(([stack, n]) => `${stack} ${n}\n`).join("");
}
