/**
 * `portier serve --check-config`: loads everything start-up loads (the keys file, the bundle, the directory,
 * the verification key) exactly as startService does, binding no port and watching nothing, then releases it
 * all and describes what it found in one line. A problem throws the same StartError start-up would.
 */
import { redactUrls } from "../reload/index.js";
import type { ServiceConfig } from "./config.js";
import { readiness } from "./http/app.js";
import { startService } from "./start-service.js";

/** The one line `--check-config` prints when the configuration would start (ports excepted). */
export async function checkConfig(config: ServiceConfig): Promise<string> {
  const service = await startService({ ...config, watch: false, logLevel: "silent" }, { listen: false });
  try {
    const { policy, verifier, directory } = service;
    const p = policy.status();
    const k = verifier.status();
    const d = directory?.status();
    const parts = [
      p.loaded ? `bundle ${p.revision ?? "?"} from ${p.source}` : `bundle from ${p.source} not loaded yet`,
      k.ready ? `${k.keyCount} key(s) from ${k.source}` : `keys from ${k.source} load in the background`,
      d
        ? `directory ${d.loaded ? `${d.size} record(s)` : "not loaded yet"} from ${d.source}`
        : config.rolesClaim !== undefined
          ? `roles from the token claim ${config.rolesClaim}`
          : "no directory (application-only)",
    ];
    const { missing } = readiness({ verifier, policy, directory });
    const waiting = missing.length ? `; not ready at start: ${missing.join("; ")}` : "";
    return redactUrls(`configuration ok: ${parts.join(", ")}${waiting} (ports not bound)`);
  } finally {
    await service.close(0, 0);
  }
}
