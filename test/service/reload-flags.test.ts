/**
 * The reload limits as options: defaults, flags, PORTIER_* environment, and each bad value named by its path.
 */
import { describe, expect, it } from "vitest";
import { loadConfig, ConfigError } from "../../src/service/index.js";

const ISSUER = ["--issuer", "https://auth.example", "--no-directory"];

describe("reload limit options", () => {
  it("have documented defaults", () => {
    expect(loadConfig(ISSUER, {})).toMatchObject({
      jwksRefreshSeconds: 60,
      bundleMaxBytes: 64 * 1024 * 1024,
      directoryMaxShrink: 0.5,
      allowDirectoryShrink: false,
    });
  });

  it("come from flags and from the environment", () => {
    expect(
      loadConfig(
        [
          ...ISSUER,
          "--jwks-refresh-seconds",
          "5",
          "--bundle-max-bytes",
          "1048576",
          "--directory-max-shrink",
          "0.1",
          "--allow-directory-shrink",
        ],
        {},
      ),
    ).toMatchObject({
      jwksRefreshSeconds: 5,
      bundleMaxBytes: 1048576,
      directoryMaxShrink: 0.1,
      allowDirectoryShrink: true,
    });
    expect(
      loadConfig(ISSUER, {
        PORTIER_DIRECTORY_MAX_SHRINK: "0.9",
        PORTIER_ALLOW_DIRECTORY_SHRINK: "1",
        PORTIER_BUNDLE_MAX_BYTES: "2048",
      }),
    ).toMatchObject({
      directoryMaxShrink: 0.9,
      allowDirectoryShrink: true,
      bundleMaxBytes: 2048,
    });
  });

  const bad: [string[], string][] = [
    [["--directory-max-shrink", "1.5"], "config.directoryMaxShrink: must be <= 1"],
    [["--directory-max-shrink=-0.1"], "config.directoryMaxShrink: must be >= 0"],
    [["--bundle-max-bytes", "10"], "config.bundleMaxBytes: must be >= 1024"],
    [["--bundle-max-bytes", "1.5"], "config.bundleMaxBytes: must be integer"],
    [["--jwks-refresh-seconds", "0"], "config.jwksRefreshSeconds: must be >= 0.05"],
  ];
  for (const [args, problem] of bad) {
    it(`refuses ${args.join(" ")}`, () => {
      let err: unknown;
      try {
        loadConfig([...ISSUER, ...args], {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      // Each problem also names where the value came from: (from --flag "value").
      expect((err as ConfigError).problems.some((p) => p.startsWith(`${problem} (from --`))).toBe(true);
    });
  }
});
