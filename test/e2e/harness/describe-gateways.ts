/**
 * Test support for the e2e suites: the same cases through each real gateway, one describe block per kind.
 */
import { afterAll, beforeAll, describe } from "vitest";
import { INSTALL_HINT, findBinary, startGateway, type GatewayKind, type RunningGateway } from "./gateways.js";

/**
 * One describe block per real gateway kind, with a gateway started before its tests and stopped after them
 * (`ports` is read then, once Portier and the upstream run); a kind whose binary is missing is skipped with a
 * visible message. `gateway()` is the running gateway inside the tests.
 */
export function describeThroughGateways(
  title: (kind: GatewayKind) => string,
  ports: () => { authPort: number; upstreamPort: number },
  body: (kind: GatewayKind, gateway: () => RunningGateway) => void,
  kinds: GatewayKind[] = ["nginx", "caddy"],
): void {
  for (const kind of kinds) {
    const missing = findBinary(kind) === undefined;
    if (missing) console.warn(`[e2e] ${kind} not found: skipping "${title(kind)}". Install: ${INSTALL_HINT[kind]}`);
    describe.skipIf(missing)(title(kind), () => {
      let running: RunningGateway | undefined;
      beforeAll(async () => {
        running = await startGateway(kind, ports());
      });
      afterAll(async () => {
        await running?.stop();
      });
      body(kind, () => running as RunningGateway);
    });
  }
}
