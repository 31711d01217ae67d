/**
 * The reload mechanism on its own: validate-then-swap, the guard, the OPA-style status (a later success,
 * a 304 included, clears the last error), attempts never overlapping, a watched file, a periodic re-read
 * that does not clear the error of a file that is still broken, and polling with back-off.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Reloader, NOT_MODIFIED, type ReloaderOptions } from "../../src/reload/index.js";

const open: Reloader<unknown>[] = [];
afterEach(() => open.splice(0).forEach((r) => r.close()));

type Step = number | "fail" | "304" | "guard";

/** A reloader whose load() answers the scripted steps in turn. */
function scripted(steps: Step[], extra: Partial<ReloaderOptions<number>> = {}) {
  const activated: number[] = [];
  const logs: object[] = [];
  const r = new Reloader<number>({
    name: "thing",
    source: "https://user:pw@bundles.example/b.tar.gz?X-Amz-Signature=abc",
    load: async (ctx) => {
      const step = steps.shift();
      if (step === "fail") {
        ctx.httpCode(500);
        throw new Error("GET https://user:pw@bundles.example/b.tar.gz?X-Amz-Signature=abc answered HTTP 500");
      }
      if (step === "304") {
        ctx.httpCode(304);
        return NOT_MODIFIED;
      }
      ctx.httpCode(200);
      if (step === "guard") return -1;
      return step as number;
    },
    guard: (next) => (next < 0 ? "refused: negative" : undefined),
    activate: (next) => activated.push(next),
    logger: { warn: (o) => logs.push(o), info: (o) => logs.push(o) },
    ...extra,
  });
  open.push(r);
  return { r, activated, logs };
}

describe("validate, guard, swap; status like OPA's bundle status", () => {
  const cases: {
    name: string;
    steps: Step[];
    current: number | undefined;
    error: RegExp | undefined;
    httpCode: number;
    reloads: number;
    failures: number;
  }[] = [
    {
      name: "a good value is activated",
      steps: [1],
      current: 1,
      error: undefined,
      httpCode: 200,
      reloads: 0,
      failures: 0,
    },
    {
      name: "a failure keeps the previous value",
      steps: [1, "fail"],
      current: 1,
      error: /HTTP 500/,
      httpCode: 500,
      reloads: 0,
      failures: 1,
    },
    {
      name: "a guard refusal keeps the previous value",
      steps: [1, "guard"],
      current: 1,
      error: /refused: negative/,
      httpCode: 200,
      reloads: 0,
      failures: 1,
    },
    {
      name: "a 304 after a failure clears the error",
      steps: [1, "fail", "304"],
      current: 1,
      error: undefined,
      httpCode: 304,
      reloads: 0,
      failures: 1,
    },
    {
      name: "a new value after a failure clears the error",
      steps: [1, "fail", 2],
      current: 2,
      error: undefined,
      httpCode: 200,
      reloads: 1,
      failures: 1,
    },
    {
      name: "a failure before any value leaves nothing loaded",
      steps: ["fail"],
      current: undefined,
      error: /HTTP 500/,
      httpCode: 500,
      reloads: 0,
      failures: 1,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { r } = scripted([...c.steps]);
      for (let i = 0; i < c.steps.length; i++) await r.reload();
      const st = r.status();
      expect(r.current).toBe(c.current);
      expect(st.loaded).toBe(c.current !== undefined);
      expect(st.lastHttpCode).toBe(c.httpCode);
      expect(st.reloads).toBe(c.reloads);
      expect(st.reloadFailures).toBe(c.failures);
      if (c.error) expect(st.lastError).toMatch(c.error);
      else expect(st.lastError).toBeUndefined();
      expect(st.lastRequest).toBeDefined();
    });
  }

  it("keeps the times apart: last request, last successful request, last activation", async () => {
    const { r } = scripted([1, "304", "fail"]);
    await r.reload();
    const activation = r.status().lastSuccessfulActivation;
    await new Promise((res) => setTimeout(res, 5));
    await r.reload();
    const st304 = r.status();
    expect(st304.lastSuccessfulActivation).toBe(activation);
    expect(st304.lastSuccessfulRequest! > activation!).toBe(true);
    await new Promise((res) => setTimeout(res, 5));
    await r.reload();
    const st = r.status();
    expect(st.lastSuccessfulRequest).toBe(st304.lastSuccessfulRequest);
    expect(st.lastRequest! > st.lastSuccessfulRequest!).toBe(true);
  });

  it("redacts the source and every error and log line", async () => {
    const { r, logs } = scripted([1, "fail"]);
    await r.reload();
    await r.reload();
    const shown = JSON.stringify([r.status(), logs]);
    expect(shown).not.toContain("pw@");
    expect(shown).not.toContain("abc");
    expect(r.status().source).toBe("https://***@bundles.example/b.tar.gz?X-Amz-Signature=***");
  });

  it("never runs two attempts at once; triggers during an attempt make exactly one more", async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const r = new Reloader<number>({
      name: "slow",
      source: "x",
      load: async () => {
        running++;
        most = Math.max(most, running);
        calls++;
        await new Promise((res) => setTimeout(res, 30));
        running--;
        return calls;
      },
      activate: () => undefined,
    });
    open.push(r);
    await Promise.all([r.reload(), r.reload(), r.reload(), r.reload()]);
    expect(most).toBe(1);
    expect(calls).toBe(2);
    expect(r.current).toBe(2);
  });
});

describe("sources", () => {
  const fileReloader = (file: string) => {
    const r = new Reloader<string>({
      name: "file",
      source: file,
      file,
      load: async () => {
        const text = await readFile(file, "utf8");
        if (!text.startsWith("ok")) throw new Error(`${file}: not ok`);
        return text;
      },
      activate: () => undefined,
    });
    open.push(r);
    return r;
  };

  it("a watched file is reloaded soon after it is replaced by rename", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-reload-"));
    const file = join(dir, "v.txt");
    writeFileSync(file, "ok 1");
    const r = fileReloader(file);
    await r.reload();
    r.watchFile({ debounceMs: 20 });
    writeFileSync(join(dir, "tmp"), "ok 2");
    renameSync(join(dir, "tmp"), file);
    await expect.poll(() => r.current, { timeout: 5000 }).toBe("ok 2");
  });

  it("without a watch, the periodic re-read notices a change; an unchanged broken file keeps its error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-reload-"));
    const file = join(dir, "v.txt");
    writeFileSync(file, "ok 1");
    const r = fileReloader(file);
    await r.reload();
    r.watchFile({ watch: false, intervalMs: 50 });
    await new Promise((res) => setTimeout(res, 200));
    // Unchanged since the first load: not read again.
    expect(r.status()).toMatchObject({ successfulRequests: 1, reloads: 0 });
    writeFileSync(file, "broken and longer");
    await expect.poll(() => r.status().reloadFailures, { timeout: 5000 }).toBe(1);
    await new Promise((res) => setTimeout(res, 300));
    // Several periods later: not re-attempted (unchanged), and the error is not cleared as if it were a 304.
    expect(r.status().reloadFailures).toBe(1);
    expect(r.status().lastError).toContain("not ok");
    expect(r.current).toBe("ok 1");
    writeFileSync(file, "ok 2, fixed");
    await expect.poll(() => r.current, { timeout: 5000 }).toBe("ok 2, fixed");
    expect(r.status().lastError).toBeUndefined();
  });

  it("polling backs off after failures and returns to the interval after a success", async () => {
    const at: number[] = [];
    let fail = true;
    const r = new Reloader<number>({
      name: "poll",
      source: "x",
      load: async () => {
        at.push(Date.now());
        if (fail) throw new Error("down");
        return at.length;
      },
      activate: () => undefined,
    });
    open.push(r);
    r.poll({ intervalMs: 20, maxBackoffMs: 160 });
    await expect.poll(() => at.length, { timeout: 5000 }).toBeGreaterThanOrEqual(4);
    expect(r.status().consecutiveFailures).toBeGreaterThanOrEqual(3);
    const gaps = at.slice(1).map((t, i) => t - at[i]!);
    // 40, 80, 160 ...: each wait at least the doubled interval (never faster than scheduled).
    expect(gaps[1]!).toBeGreaterThanOrEqual(75);
    fail = false;
    await expect.poll(() => r.status().consecutiveFailures, { timeout: 5000 }).toBe(0);
  });
});
