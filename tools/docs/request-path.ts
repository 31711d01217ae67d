/**
 * Draws docs/images/request-path.svg from docs/images/request-path.json: the steps of a request as boxes left to
 * right with arrows, each reloaded input as a dashed box above the step it feeds, and the audit trail below the
 * last step. Plain SVG, fixed layout, so the same source always gives the same bytes (`make lint` compares them).
 */

interface Box {
  label: string;
  lines: string[];
}
interface Source {
  title: string;
  steps: Box[];
  inputs: (Box & { step: string })[];
  trail: Box;
}

const W = 170;
const GAP = 36;
const H = 92;
const MARGIN = 20;
const INPUT_Y = 44;
const INPUT_H = 56;
const STEP_Y = INPUT_Y + INPUT_H + 40;
const TRAIL_Y = STEP_Y + H + 40;

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);
}

function isSource(value: unknown): value is Source {
  if (typeof value !== "object" || value === null) return false;
  const s: Partial<Record<keyof Source, unknown>> = value;
  return (
    typeof s.title === "string" && Array.isArray(s.steps) && Array.isArray(s.inputs) && typeof s.trail === "object"
  );
}

function box(x: number, y: number, h: number, b: Box, style: string): string {
  const text = [
    `<text x="${x + W / 2}" y="${y + 22}" class="label">${escape(b.label)}</text>`,
    ...b.lines.map((line, i) => `<text x="${x + W / 2}" y="${y + 42 + i * 16}" class="detail">${escape(line)}</text>`),
  ];
  return [`<rect x="${x}" y="${y}" width="${W}" height="${h}" rx="8" class="${style}"/>`, ...text].join("\n");
}

export function requestPathSvg(json: string): string {
  const source: unknown = JSON.parse(json);
  if (!isSource(source)) throw new Error("docs/images/request-path.json: needs title, steps, inputs and trail");
  const x = (i: number) => MARGIN + i * (W + GAP);
  const width = x(source.steps.length) - GAP + MARGIN;
  const height = TRAIL_Y + INPUT_H + 8 + MARGIN;
  const parts: string[] = [];
  source.steps.forEach((step, i) => {
    parts.push(box(x(i), STEP_Y, H, step, "step"));
    if (i > 0)
      parts.push(
        `<line x1="${x(i) - GAP}" y1="${STEP_Y + H / 2}" x2="${x(i) - 4}" y2="${STEP_Y + H / 2}" class="arrow"/>`,
      );
  });
  for (const input of source.inputs) {
    const i = source.steps.findIndex((s) => s.label === input.step);
    if (i < 0) throw new Error(`docs/images/request-path.json: input "${input.label}" names no step "${input.step}"`);
    parts.push(box(x(i), INPUT_Y, INPUT_H, input, "input"));
    parts.push(
      `<line x1="${x(i) + W / 2}" y1="${INPUT_Y + INPUT_H}" x2="${x(i) + W / 2}" y2="${STEP_Y - 4}" class="feed"/>`,
    );
  }
  const last = x(source.steps.length - 1);
  parts.push(box(last, TRAIL_Y, INPUT_H + 8, source.trail, "trail"));
  parts.push(`<line x1="${last + W / 2}" y1="${STEP_Y + H}" x2="${last + W / 2}" y2="${TRAIL_Y - 4}" class="arrow"/>`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 ` +
    `0 ${width} ${height}" role="img" aria-label="${escape(source.title)}">
<!-- Drawn by tools/write-references.ts from docs/images/request-path.json; do not edit. -->
<title>${escape(source.title)}</title>
<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path ` +
    `d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>
<style>
text{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;text-anchor:middle;fill:#1b1b1b}
.label{font-size:15px;font-weight:600}.detail{font-size:12px;fill:#444}` +
    `.title{font-size:16px;font-weight:600;text-anchor:start}
.step{fill:#eef4fb;stroke:#3c6ea8;stroke-width:1.5}.input{fill:#fff;stroke:#888;stroke-dasharray:5 4}
.trail{fill:#f5f0e6;stroke:#a07c3c;stroke-width:1.5}
.arrow{stroke:#444;stroke-width:1.5;marker-end:url(#head)}.feed{stroke:#888;stroke-width:1.2;stroke-dasharray:4 ` +
    `3;marker-end:url(#head)}
</style>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${MARGIN}" y="26" class="title">${escape(source.title)}</text>
${parts.join("\n")}
</svg>
`
  );
}
