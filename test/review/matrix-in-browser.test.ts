/**
 * The HTML access matrix in a real browser (Debian's chromium driven by playwright-core), at a laptop's
 * 1400 px: every grant column fits, the header stays in view, the legend and deny reasons are visible,
 * and the role and route filters work. A screenshot is written to build/access-matrix.png.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type Browser, type Page } from "playwright-core";
import { loadEngine } from "../../src/engine/index.js";
import { computeMatrix, renderMatrix, type AccessMatrix } from "../../src/review/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";

// The few browser globals the page-side callbacks use (the tests' tsconfig has no DOM library).
declare const document: { documentElement: { scrollWidth: number } };
declare const window: { scrollTo(x: number, y: number): void };
type Shown = { offsetParent: unknown };
/** The members of a page element these checks read in the browser (the project's tsconfig has no DOM lib). */
type Cell = {
  textContent: string | null;
  getAttribute(name: string): string | null;
  getBoundingClientRect(): { top: number; right: number; width: number };
};

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const BUILD = join(PROJECT_ROOT, "build");
// CI installs chromium (.ci/run); elsewhere the test says why it skipped.
if (!CHROMIUM)
  console.warn("matrix-in-browser: no chromium found (apt-get install chromium): the browser test is skipped");

describe.skipIf(!CHROMIUM)("the HTML matrix in chromium at 1400 px", () => {
  let browser: Browser;
  let page: Page;
  let matrix: AccessMatrix;

  beforeAll(async () => {
    matrix = computeMatrix(await loadEngine(requireBundle()));
    mkdirSync(BUILD, { recursive: true });
    const file = join(BUILD, "access-matrix.html");
    writeFileSync(file, renderMatrix(matrix, "html"));
    browser = await chromium.launch({
      ...(CHROMIUM && { executablePath: CHROMIUM }),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`file://${file}`);
    await page.screenshot({ path: join(BUILD, "access-matrix.png") });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it("says it is English and fits every grant column in the window", async () => {
    expect(await page.getAttribute("html", "lang")).toBe("en");
    const headers = await page.$$eval("#grid thead th.grant", (ths) =>
      (ths as unknown as Cell[]).map((th) => ({
        text: th.textContent ?? "",
        right: th.getBoundingClientRect().right,
        width: th.getBoundingClientRect().width,
      })),
    );
    expect(headers).toHaveLength(matrix.columns.length);
    for (const h of headers) {
      expect(h.right, h.text).toBeLessThanOrEqual(1400);
      expect(h.width, h.text).toBeGreaterThan(40);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1400);
  });

  it("keeps the header in view when the grid scrolls", async () => {
    await page.evaluate(() => window.scrollTo(0, 1200));
    const top = await page.$eval("#grid thead th.grant", (th) => (th as unknown as Cell).getBoundingClientRect().top);
    expect(Math.abs(top)).toBeLessThan(2);
    await page.evaluate(() => window.scrollTo(0, 0));
  });

  it("shows a legend and each deny's reason as text, not a tooltip", async () => {
    const legend = await page.textContent("#legend");
    for (const term of ["synced, no role", "not synced", "application", "allow", "deny"])
      expect(legend).toContain(term);
    const row = matrix.rows.findIndex((r) => r.template === "/v2/{codeOrganisme}/elevesAdultes");
    const denied = await page.$$eval(
      "#grid tr.route",
      (trs, i) =>
        (trs[i] as unknown as { querySelector(s: string): { textContent: string | null } | null }).querySelector(
          "td[data-col='eleve_jeune']",
        )?.textContent ?? "",
      row,
    );
    expect(denied).toBe("denyrole_not_allowed");
    expect(await page.isVisible("#grid td.deny .reason")).toBe(true);
  });

  it("filters by role and by route", async () => {
    await page.selectOption("#role-filter", "enseignant_adulte");
    const visible = await page.$$eval("#grid thead th.grant", (ths) =>
      (ths as unknown as (Cell & Shown)[])
        .filter((th) => th.offsetParent !== null)
        .map((th) => th.getAttribute("data-col")),
    );
    expect(visible).toEqual(["enseignant_adulte"]);
    await page.fill("#route-filter", "elevesadultes");
    const rows = await page.$$eval(
      "#grid tr.route",
      (trs) => trs.filter((tr) => (tr as unknown as Shown).offsetParent !== null).length,
    );
    expect(rows).toBe(matrix.rows.filter((r) => r.template.toLowerCase().includes("elevesadultes")).length);
    expect(await page.textContent("#shown")).toBe(`${rows} route(s) shown`);
    await page.selectOption("#role-filter", "");
    await page.fill("#route-filter", "");
    expect(
      await page.$$eval(
        "#grid tr.route",
        (trs) => trs.filter((tr) => (tr as unknown as Shown).offsetParent !== null).length,
      ),
    ).toBe(matrix.rows.length);
  });

  it("shows the tenant bindings and the other probes", async () => {
    expect(await page.textContent("table.tenancy")).toContain("a code nobody owns");
    expect(await page.textContent("table.other")).toContain("method_not_allowed");
  });
});
