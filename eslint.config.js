// Lint: typescript-eslint's type-aware checks that catch what tsc lets through (promises nobody awaits or
// catches, promises passed where a callback returns void). `make lint` runs it; `make test` depends on it.
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "build/**", "node_modules/**", ".tools/**", "coverage/**", "vitest.config.ts"] },
  {
    files: ["**/*.ts"],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { project: "./tsconfig.test.json", tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    // A disable comment may name a rule not enabled here (it documents why the code is so): not reported.
    linterOptions: { reportUnusedDisableDirectives: "off" },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
);
