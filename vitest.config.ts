import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Sized for CI on a busy 2-core machine, where the suite must fail only when a test fails. Vitest 4 no longer
// bounds the RPC between a test worker and the main process (vitest 3 fixed it at 60 s, and a worker whose event
// loop a starved CPU held longer reported `Timeout calling "onTaskUpdate"`, an unhandled error that turned a run red
// with every test green); a hung test still fails, by the test and hook timeouts below. One fork per core (at most
// 4), not four on two, keeps fewer processes fighting for the cores.
const FORKS = Math.max(1, Math.min(4, availableParallelism()));

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Generous because a loaded machine runs a real-process test (opa, gateways, services started and stopped) at
    // several times its idle duration; a hung test still fails, a minute later.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Time for the workers' and globalSetup's teardown (the forks stop their child processes) before vitest gives up
    // and reports `close timed out`; 10 s by default.
    teardownTimeout: 30_000,
    // The real-process tests run dist/cli/main.js: compiled here first when src/ is newer. Temporary files go
    // to one folder per run, removed at its end (temp-root.ts).
    globalSetup: ["test/support/build-dist.ts", "test/support/temp-root.ts"],
    pool: "forks",
    maxWorkers: FORKS,
  },
});
