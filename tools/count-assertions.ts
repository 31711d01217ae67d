/**
 * Counts type assertions in src/ by syntax tree (TypeScript's compiler API, not text search): `x as T` and
 * `<T>x` (`as const` excluded: it asserts nothing), among them `as unknown as T`, and non-null assertions `x!`
 * separately; per top-level folder and per 1,000 source lines. `make lint` runs it with the bar of issue 18:
 *
 *   npx tsx tools/count-assertions.ts [--root src] [--max-as-per-kloc N] [--max-non-null-per-kloc N]
 *
 * Exits 1, naming the count and the bar, when a count per 1,000 lines of the whole tree is above its bar.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { parseArgs } from "node:util";
import ts from "typescript";

export interface AssertionCounts {
  lines: number;
  /** `x as T` and `<T>x`, `as const` excluded. */
  as: number;
  /** Of those, `x as unknown as T` (counted once, as the outer assertion). */
  asUnknownAs: number;
  /** `x!`. */
  nonNull: number;
}

const isAsConst = (type: ts.TypeNode) =>
  ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) && type.typeName.text === "const";

const isUnknownAssertion = (node: ts.Expression): boolean => {
  const inner = ts.isParenthesizedExpression(node) ? node.expression : node;
  return (
    (ts.isAsExpression(inner) || ts.isTypeAssertionExpression(inner)) &&
    inner.type.kind === ts.SyntaxKind.UnknownKeyword
  );
};

/** The counts of one file's text. */
export function countAssertions(text: string, fileName = "file.ts"): AssertionCounts {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const counts: AssertionCounts = {
    lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
    as: 0,
    asUnknownAs: 0,
    nonNull: 0,
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isAsConst(node.type)) {
      // The inner `x as unknown` of `x as unknown as T` is half of one double assertion, not a second one.
      const parent = ts.isParenthesizedExpression(node.parent) ? node.parent.parent : node.parent;
      const innerOfDouble =
        node.type.kind === ts.SyntaxKind.UnknownKeyword &&
        parent !== undefined &&
        (ts.isAsExpression(parent) || ts.isTypeAssertionExpression(parent));
      if (!innerOfDouble) {
        counts.as++;
        if (isUnknownAssertion(node.expression)) counts.asUnknownAs++;
      }
    } else if (ts.isNonNullExpression(node)) {
      counts.nonNull++;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return counts;
}

function* typeScriptFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* typeScriptFiles(path);
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) yield path;
  }
}

const add = (a: AssertionCounts, b: AssertionCounts): AssertionCounts => ({
  lines: a.lines + b.lines,
  as: a.as + b.as,
  asUnknownAs: a.asUnknownAs + b.asUnknownAs,
  nonNull: a.nonNull + b.nonNull,
});
const ZERO: AssertionCounts = { lines: 0, as: 0, asUnknownAs: 0, nonNull: 0 };

/** Counts per top-level folder of `root` (files directly in it count as "."), and the total. */
export function countTree(root: string): { folders: Map<string, AssertionCounts>; total: AssertionCounts } {
  const folders = new Map<string, AssertionCounts>();
  let total = ZERO;
  for (const file of typeScriptFiles(root)) {
    const parts = relative(root, file).split(sep);
    const folder = parts.length > 1 ? parts[0]! : ".";
    const counts = countAssertions(readFileSync(file, "utf8"), file);
    folders.set(folder, add(folders.get(folder) ?? ZERO, counts));
    total = add(total, counts);
  }
  return { folders, total };
}

export const perKiloLine = (n: number, lines: number): number => (lines === 0 ? 0 : (n * 1000) / lines);

function bar(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new Error(`${flag}: expected a number >= 0, got ${JSON.stringify(value)}`);
  return n;
}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: {
      root: { type: "string", default: "src" },
      "max-as-per-kloc": { type: "string" },
      "max-non-null-per-kloc": { type: "string" },
    },
  });
  const maxAs = bar(values["max-as-per-kloc"], "--max-as-per-kloc");
  const maxNonNull = bar(values["max-non-null-per-kloc"], "--max-non-null-per-kloc");
  const { folders, total } = countTree(values.root);
  const row = (name: string, c: AssertionCounts) =>
    `${name.padEnd(12)} ${String(c.lines).padStart(6)} ${String(c.as).padStart(5)} ` +
    `${perKiloLine(c.as, c.lines).toFixed(1).padStart(7)} ${String(c.asUnknownAs).padStart(12)} ` +
    `${String(c.nonNull).padStart(5)} ${perKiloLine(c.nonNull, c.lines).toFixed(1).padStart(7)}`;
  console.log(
    `${"folder".padEnd(12)} ${"lines".padStart(6)} ${"as".padStart(5)} ${"as/kloc".padStart(7)} ` +
      `${"as unknown as".padStart(12)} ${"!".padStart(5)} ${"!/kloc".padStart(7)}`,
  );
  for (const [name, c] of [...folders].sort(([a], [b]) => a.localeCompare(b))) console.log(row(name, c));
  console.log(row("total", total));
  const failures: string[] = [];
  const asRate = perKiloLine(total.as, total.lines);
  const nonNullRate = perKiloLine(total.nonNull, total.lines);
  if (maxAs !== undefined && asRate > maxAs)
    failures.push(
      `${total.as} \`as\` assertions in ${values.root}/ are ${asRate.toFixed(1)} per 1,000 lines, above the bar ` +
        `of ${maxAs} (--max-as-per-kloc): type the values instead (type guards, generics, typed validators, satisfies)`,
    );
  if (maxNonNull !== undefined && nonNullRate > maxNonNull)
    failures.push(
      `${total.nonNull} non-null assertions in ${values.root}/ are ${nonNullRate.toFixed(1)} per 1,000 lines, ` +
        `above the bar of ${maxNonNull} (--max-non-null-per-kloc)`,
    );
  for (const f of failures) console.error(`count-assertions: ${f}`);
  return failures.length > 0 ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    console.error(`count-assertions: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  }
}
