// Lint: typescript-eslint's recommended type-checked rules (issue 18 item 4), plus the two promise rules the
// project started with, as errors. `make lint` runs it; `make test` depends on it.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "build/**", "node_modules/**", ".tools/**", "coverage/**", "vitest.config.ts"] },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { project: "./tsconfig.test.json", tsconfigRootDir: import.meta.dirname },
    },
    // A disable comment may name a rule not enabled here (it documents why the code is so): not reported.
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      // Configured, not disabled: a leading underscore marks a parameter a signature needs but the body does not
      // (Express tells an error handler by its four parameters, `_next` included) and a property left out by a
      // rest copy (`const { token: _omit, ...rest } = x`).
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_", ignoreRestSiblings: true },
      ],
      // Disabled: an async function without await is how we keep a promise contract, so that a failure is a
      // rejection and never a synchronous throw: every command's run() (test/cli/help.test.ts awaits the
      // rejection of `run(["--help"])`), interface methods that return promises (prom-client's collect/get, the
      // test doubles of engines and key sources). The rule would have these rewritten to Promise.resolve().
      "@typescript-eslint/require-await": "off",
    },
  },
);
