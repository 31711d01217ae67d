/**
 * Rewrites the example output in docs/review/pull-requests.md with what `portier review` prints today (run in a
 * repository made for it, test/support/review-example.ts): `npx tsx tools/write-review-example.ts` after a change
 * to the review's output, the policies or data/. test/review/pull-requests-doc.test.ts fails when they differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { EXAMPLE_BLOCK, EXAMPLE_PAGE, runExample } from "../test/support/review-example.js";

const { output } = await runExample();
const page = readFileSync(EXAMPLE_PAGE, "utf8");
if (!EXAMPLE_BLOCK.test(page)) throw new Error(`${EXAMPLE_PAGE}: the example's command and text blocks are missing`);
writeFileSync(
  EXAMPLE_PAGE,
  page.replace(EXAMPLE_BLOCK, (_, open: string, _old: string, close: string) => open + output + close),
);
console.log(`wrote ${EXAMPLE_PAGE}`);
