/**
 * Benchmark support: runs a function repeatedly for a fixed time and reports operations per second.
 * Rounds alternate between the compared functions so that machine noise hits them alike; the median
 * of the rounds is reported.
 */

export interface Rate {
  name: string;
  perSecond: number;
}

/** "cpu": operations per second of this process's CPU time (GC threads included), steadier on a shared machine. */
export type Clock = "wall" | "cpu";

function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function rateOf(fn: () => void, ms: number, clock: Clock = "wall"): number {
  let n = 0;
  const start = performance.now();
  const cpuStart = clock === "cpu" ? cpuMs() : 0;
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 64; i++) fn();
    n += 64;
    now = performance.now();
  }
  return (n * 1000) / (clock === "cpu" ? cpuMs() - cpuStart : now - start);
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** Interleaved rounds of each function; returns the median rate of each. */
export function compareSync(
  fns: Record<string, () => void>,
  opts: { rounds?: number; ms?: number; clock?: Clock; rotate?: boolean } = {},
): Rate[] {
  const rounds = opts.rounds ?? 5;
  const ms = opts.ms ?? 300;
  const samples = new Map<string, number[]>(Object.keys(fns).map((k) => [k, []]));
  for (const fn of Object.values(fns)) rateOf(fn, 50); // warm up
  const entries = Object.entries(fns);
  for (let r = 0; r < rounds; r++) {
    // With `rotate`, each round starts with the next function, so that no function always runs first.
    for (let i = 0; i < entries.length; i++) {
      const [name, fn] = entries[opts.rotate ? (r + i) % entries.length : i] as [string, () => void];
      samples.get(name)?.push(rateOf(fn, ms, opts.clock));
    }
  }
  return [...samples].map(([name, xs]) => ({ name, perSecond: median(xs) }));
}

/** Throughput of an async operation with `concurrency` calls in flight, for `ms`. */
export async function rateAsync(fn: () => Promise<unknown>, concurrency: number, ms: number): Promise<number> {
  return (await rateAndCpuAsync(fn, concurrency, ms)).rate;
}

/** rateAsync plus the process's CPU microseconds per operation (all threads, libuv's pool included). */
export async function rateAndCpuAsync(
  fn: () => Promise<unknown>,
  concurrency: number,
  ms: number,
): Promise<{ rate: number; cpuUs: number }> {
  let n = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const deadline = start + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await fn();
        n++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { rate: (n * 1000) / (performance.now() - start), cpuUs: (cpu.user + cpu.system) / n };
}

export function fmt(rate: number): string {
  return rate >= 1000 ? `${(rate / 1000).toFixed(1)}k/s` : `${rate.toFixed(0)}/s`;
}
