/**
 * Issue 9 item 3 through real gateways: a key removed from `--jwks FILE` stops verifying at nginx and
 * caddy (the upstream is no longer reached), tokens already verified and cached included.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { INSTALL_HINT, findBinary, startGateway, type GatewayKind } from "./harness/gateways.js";
import { bearer, send } from "./harness/http.js";
import { startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { USERS } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";
import { ISSUER, makeKeys, tempDir, until, userToken, type Keys } from "../service/helpers.js";

const PATH = "/v2/ORG001/elevesJeunes";
const KINDS: GatewayKind[] = ["nginx", "caddy"];

for (const kind of KINDS) {
  const missing = findBinary(kind) === undefined;
  if (missing) console.warn(`[e2e] ${kind} not found: skipping. Install: ${INSTALL_HINT[kind]}`);

  describe.skipIf(missing)(`key removed from --jwks FILE, through ${kind}`, () => {
    let upstream: RunningUpstream;
    let service: RunningPortier;
    let k1: Keys;
    let k2: Keys;
    let jwks: string;
    beforeAll(async () => {
      k1 = await makeKeys("k1");
      k2 = await makeKeys("k2");
      jwks = join(tempDir(), "jwks.json");
      writeFileSync(jwks, JSON.stringify({ keys: [...k1.jwks.keys, ...k2.jwks.keys] }));
      upstream = await startUpstream();
      service = await startServiceProcess(ISSUER, ["--jwks", jwks]);
    }, 60_000);
    afterAll(async () => {
      await service?.stop();
      await upstream?.close();
    });

    it("the upstream is reached with a k1 token until k1 leaves the file, then the gateway answers 401", async () => {
      const gateway = await startGateway(kind, { authPort: service.port, upstreamPort: upstream.port });
      try {
        const user = USERS["enseignant.jeune"];
        const token = await userToken(k1, user.sub, { tenant_id: user.tenant });
        for (let i = 0; i < 2; i++)
          expect((await send(gateway.url, PATH, { headers: bearer(token) })).status).toBe(200);
        expect(upstream.seen.length).toBe(2);

        writeFileSync(`${jwks}.tmp`, JSON.stringify(k2.jwks));
        renameSync(`${jwks}.tmp`, jwks);
        await until(async () => (await send(gateway.url, PATH, { headers: bearer(token) })).status === 401, 10_000);
        upstream.seen.length = 0;
        const res = await send(gateway.url, PATH, { headers: bearer(token) });
        expect(res.status).toBe(401);
        expect(upstream.seen).toHaveLength(0);
        expect(
          (
            await send(gateway.url, PATH, {
              headers: bearer(await userToken(k2, user.sub, { tenant_id: user.tenant })),
            })
          ).status,
        ).toBe(200);
      } finally {
        await gateway.stop();
      }
    }, 60_000);
  });
}
