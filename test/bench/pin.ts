/**
 * CPU pinning for the benchmarks (issue 20: "a core per worker, simulated with taskset"): BENCH_SERVER_CPUS and
 * BENCH_CLIENT_CPUS (taskset lists, e.g. "1" and "0") run the servers and the load generators (wrk, vegeta, ghz)
 * on cores of their own; unset, the scheduler places them as it likes (the default).
 */
export type Role = "server" | "client";

/** `cmd args` as run under taskset for `role` when its variable is set, else unchanged. */
export function pinned(role: Role, cmd: string, args: string[]): [string, string[]] {
  const cpus = process.env[role === "server" ? "BENCH_SERVER_CPUS" : "BENCH_CLIENT_CPUS"];
  return cpus ? ["taskset", ["-c", cpus, cmd, ...args]] : [cmd, args];
}

/** A line for a benchmark's output saying how the processes were placed. */
export function placement(): string {
  const server = process.env.BENCH_SERVER_CPUS;
  const client = process.env.BENCH_CLIENT_CPUS;
  return server || client
    ? `pinned with taskset: servers on CPU ${server ?? "any"}, load generators on CPU ${client ?? "any"}`
    : "not pinned (BENCH_SERVER_CPUS / BENCH_CLIENT_CPUS unset)";
}
