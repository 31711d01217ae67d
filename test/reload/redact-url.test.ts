/**
 * redactUrls: userinfo and query values never shown, in a bare URL or inside a message.
 */
import { describe, expect, it } from "vitest";
import { redactUrls } from "../../src/reload/index.js";

const cases: [string, string][] = [
  ["https://bundles.example/b.tar.gz", "https://bundles.example/b.tar.gz"],
  [
    "https://s3.example/b.tar.gz?X-Amz-Signature=deadbeef&X-Amz-Date=2026",
    "https://s3.example/b.tar.gz?X-Amz-Signature=***&X-Amz-Date=***",
  ],
  ["http://user:p%40ss@host:8080/jwks", "http://***@host:8080/jwks"],
  ["http://token@host/x?api_key=k#frag", "http://***@host/x?api_key=***"],
  ["https://host/jwks?secretonly", "https://host/jwks?***"],
  ["GET https://host/jwks?api_key=k answered HTTP 500", "GET https://host/jwks?api_key=*** answered HTTP 500"],
  [
    "failed: https://u:p@a.example/x?t=1. Then http://b.example/?s=2",
    "failed: https://***@a.example/x?t=***. Then http://b.example/?s=***",
  ],
  ["/etc/portier/users.json", "/etc/portier/users.json"],
  ["the user@example.org wrote it", "the user@example.org wrote it"],
];

describe("redactUrls", () => {
  for (const [input, expected] of cases) {
    it(input, () => {
      expect(redactUrls(input)).toBe(expected);
    });
  }
});
