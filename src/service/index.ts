/**
 * The decision service (portier serve): configuration, the decision pipeline (decide/), its HTTP adapters and
 * operator app (http/) and gRPC port (grpc/), reload, cluster.
 */
export { loadConfig, ConfigError, SERVICE_OPTIONS, type ServiceConfig } from "./config.js";
export { startService, listenFailure, type RunningService } from "./start-service.js";
export { stopAccepting } from "./connection-drain.js";
export { checkConfig } from "./check-config.js";
export { decisionLogSinks } from "./decision-log-sinks.js";
