/**
 * tools/check-links.ts: a relative link to a missing file, or to a heading or anchor its page lacks, is reported
 * with its file and line; links in code, web links, headings (GitHub's slugs, repeated ones numbered) and
 * `<a id>` anchors are not.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { brokenLinks } from "../../tools/check-links.js";
import { tempDir } from "../service/helpers.js";

it("reports each broken link by file and line, and nothing else", () => {
  const root = tempDir();
  mkdirSync(join(root, "docs/operating"), { recursive: true });
  writeFileSync(
    join(root, "docs/operating/gateways.md"),
    [
      "# Gateways",
      "## gRPC ext_authz (Envoy and Istio)",
      "## Notes",
      "## Notes",
      '<a id="reason-token_expired"></a>',
    ].join("\n"),
  );
  writeFileSync(
    join(root, "README.md"),
    [
      "[ok](docs/operating/gateways.md) [ok](docs/operating/gateways.md#grpc-ext_authz-envoy-and-istio)",
      "[ok](docs/operating/gateways.md#notes-1) [ok](docs/operating/gateways.md#reason-token_expired) [ok](#tour)",
      "[web](https://example.com/nowhere) `[code](missing.md)` [ok folder](docs)",
      "```sh",
      "[in a block](missing.md)",
      "```",
      "## Tour",
      "[missing](docs/nope.md)",
      "[bad anchor](docs/operating/gateways.md#grpc)",
      '<img src="docs/images/none.svg">',
    ].join("\n"),
  );
  expect(brokenLinks(root)).toEqual({
    pages: 2,
    problems: [
      "README.md:8: docs/nope.md: no such file",
      'README.md:9: docs/operating/gateways.md#grpc: no heading or <a id> "grpc" in docs/operating/gateways.md',
      "README.md:10: docs/images/none.svg: no such file",
    ],
  });
});
