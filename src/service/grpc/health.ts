/**
 * grpc.health.v1.Health for the gRPC port: SERVING exactly while /ready would answer 200 (the same readiness
 * function, http/app.ts), so Envoy's gRPC cluster health check and Kubernetes' gRPC probes see what /ready says.
 * Answers for the whole server ("") and for envoy.service.auth.v3.Authorization; NOT_SERVING once the
 * service is stopping. Watch sends the status, then each change (checked every WATCH_INTERVAL_MS), and is
 * bounded (MAX_WATCHERS streams at once).
 */
import * as grpc from "@grpc/grpc-js";

export const AUTHORIZATION_SERVICE = "envoy.service.auth.v3.Authorization";
const SERVICES = new Set(["", AUTHORIZATION_SERVICE]);
const WATCH_INTERVAL_MS = 1000;
const MAX_WATCHERS = 256;

type ServingStatus = "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN";
interface HealthRequest {
  service?: string;
}
interface HealthResponse {
  status: ServingStatus;
}

export interface HealthService {
  handlers: grpc.UntypedServiceImplementation;
  /** From now on NOT_SERVING; open Watch streams get it and end. */
  stop(): void;
}

export function healthService(ready: () => boolean): HealthService {
  let stopping = false;
  /** Each open Watch: ends it (with a last NOT_SERVING when the service stops). */
  const watchers = new Set<(final: boolean) => void>();
  const status = (): ServingStatus => (!stopping && ready() ? "SERVING" : "NOT_SERVING");
  const unknown = (service: string): string =>
    `unknown service "${service.slice(0, 100)}": ask for "" or "${AUTHORIZATION_SERVICE}"`;

  const check: grpc.handleUnaryCall<HealthRequest, HealthResponse> = (call, callback) => {
    const service = call.request?.service ?? "";
    if (!SERVICES.has(service)) return callback({ code: grpc.status.NOT_FOUND, details: unknown(service) });
    callback(null, { status: status() });
  };

  const watch: grpc.handleServerStreamingCall<HealthRequest, HealthResponse> = (call) => {
    const service = call.request?.service ?? "";
    if (watchers.size >= MAX_WATCHERS)
      return void call.emit("error", {
        code: grpc.status.RESOURCE_EXHAUSTED,
        details: `at most ${MAX_WATCHERS} health watches at once: use Check`,
      });
    if (!SERVICES.has(service)) {
      call.write({ status: "SERVICE_UNKNOWN" });
      return call.end();
    }
    let last = status();
    call.write({ status: last });
    const end = (final: boolean): void => {
      clearInterval(timer);
      if (!watchers.delete(end) || !final) return;
      call.write({ status: "NOT_SERVING" });
      call.end();
    };
    const timer = setInterval(() => {
      const now = status();
      if (now === last) return;
      last = now;
      call.write({ status: now });
    }, WATCH_INTERVAL_MS);
    timer.unref();
    watchers.add(end);
    const gone = (): void => end(false);
    call.on("cancelled", gone);
    call.on("close", gone);
    call.on("error", gone);
  };

  return {
    handlers: { Check: check, Watch: watch },
    stop() {
      stopping = true;
      for (const end of [...watchers]) end(true);
    },
  };
}
