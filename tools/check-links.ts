/**
 * Checks every relative link and anchor of README.md and docs/**\/*.md: the file (or folder) must exist, and a
 * `#fragment` must be a heading of the target page (GitHub's slugs: lower case, punctuation dropped, spaces as
 * dashes, a repeated heading numbered -1, -2, ...) or an `<a id>` in it. Links in code blocks and code spans are
 * not links. Web links are not fetched. Exits 1 listing each broken link as file:line (`make lint` runs it).
 *
 *   npx tsx tools/check-links.ts [--root DIR]   # DIR: the repository (default: this one)
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}

/** The page's lines with fenced code blocks blanked and code spans removed (line numbers kept). */
function prose(text: string): string[] {
  let fence: string | undefined;
  return text.split("\n").map((line) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (fence !== undefined) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return "";
    }
    if (marker) {
      fence = marker;
      return "";
    }
    return line.replace(/(`+)[\s\S]*?\1/g, "");
  });
}

function slug(heading: string): string {
  return heading
    .replace(/<[^>]+>/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

const anchorCache = new Map<string, Set<string>>();

function anchors(file: string): Set<string> {
  let found = anchorCache.get(file);
  if (found) return found;
  found = new Set();
  const text = readFileSync(file, "utf8");
  const seen = new Map<string, number>();
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]!.replace(/`/g, ""));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      found.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(m[1]!);
  }
  anchorCache.set(file, found);
  return found;
}

function check(root: string, file: string): string[] {
  const problems: string[] = [];
  prose(readFileSync(file, "utf8")).forEach((line, i) => {
    for (const m of line.matchAll(
      /!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/g,
    )) {
      const target = m[1] ?? m[2]!;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [path, fragment] = target.split("#", 2) as [string, string | undefined];
      const where = `${relative(root, file)}:${i + 1}`;
      const to = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(to)) {
        problems.push(`${where}: ${target}: no such file`);
        continue;
      }
      if (fragment === undefined || fragment === "") continue;
      if (statSync(to).isDirectory() || !to.endsWith(".md")) {
        problems.push(`${where}: ${target}: an anchor into a file that is not a Markdown page`);
        continue;
      }
      if (!anchors(to).has(decodeURIComponent(fragment)))
        problems.push(`${where}: ${target}: no heading or <a id> "${fragment}" in ${relative(root, to)}`);
    }
  });
  return problems;
}

/** Every broken relative link or anchor of README.md and docs/**\/*.md under `root`, as `file:line: why`. */
export function brokenLinks(root: string): { pages: number; problems: string[] } {
  const docs = join(root, "docs");
  const files = [join(root, "README.md"), ...(existsSync(docs) ? markdownFiles(docs) : [])].filter((f) =>
    existsSync(f),
  );
  return { pages: files.length, problems: files.flatMap((f) => check(root, f)) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf("--root");
  const root = at > 0 ? resolve(process.argv[at + 1] ?? ".") : fileURLToPath(new URL("../", import.meta.url));
  const { pages, problems } = brokenLinks(root);
  if (problems.length) {
    console.error(problems.join("\n"));
    console.error(`links: ${problems.length} broken in ${pages} pages`);
    process.exitCode = 1;
  } else console.log(`links: ${pages} pages, every relative link and anchor found`);
}
