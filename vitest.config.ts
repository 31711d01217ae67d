import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The real-process tests run dist/cli/main.js: compiled here first when src/ is newer. Temporary files go
    // to one folder per run, removed at its end (temp-root.ts).
    globalSetup: ["test/support/build-dist.ts", "test/support/temp-root.ts"],
    pool: "forks",
    // Four forks on two cores: many suites wait on child processes (opa, gateways, real services), not on CPU.
    poolOptions: { forks: { maxForks: 4, minForks: 1 } },
  },
});
