/**
 * Lists the lines of the .ts and .mjs files under --root (src/, test/ and tools/ in `make lint`) longer than the
 * bar (120 characters by default), strings, template literals and comments included (prettier wraps code at its
 * print width but not those), as `path:line: N characters`:
 *
 *   npx tsx tools/check-line-length.ts [--root src] [--max 120]
 *
 * Characters are Unicode code points, not UTF-16 units. Exits 1 when a line is over the bar, 2 on a bad argument.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

export interface LongLine {
  path: string;
  /** 1-based. */
  line: number;
  characters: number;
}

/** The lines of one file's text longer than `max` characters. */
export function longLines(text: string, path: string, max: number): LongLine[] {
  const found: LongLine[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const characters = [...line].length;
    if (characters > max) found.push({ path, line: i + 1, characters });
  });
  return found;
}

function* sourceFiles(dir: string): Generator<string> {
  const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sourceFiles(path);
    else if (/\.(ts|mjs)$/.test(entry.name)) yield path;
  }
}

/** The long lines of every .ts and .mjs file under `root`, in path order. */
export function checkTree(root: string, max: number): LongLine[] {
  const found: LongLine[] = [];
  for (const file of sourceFiles(root)) found.push(...longLines(readFileSync(file, "utf8"), file, max));
  return found;
}

function main(argv: string[]): number {
  const { values } = parseArgs({
    args: argv,
    options: { root: { type: "string", default: "src" }, max: { type: "string", default: "120" } },
  });
  const max = Number(values.max);
  if (values.max.trim() === "" || !Number.isInteger(max) || max < 1)
    throw new Error(`--max: expected a whole number >= 1, got ${JSON.stringify(values.max)}`);
  const found = checkTree(values.root, max);
  for (const f of found) console.log(`${f.path}:${f.line}: ${f.characters} characters`);
  if (found.length === 0) return 0;
  console.error(`check-line-length: ${found.length} line(s) in ${values.root}/ over ${max} characters`);
  return 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (err) {
    console.error(`check-line-length: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 2;
  }
}
