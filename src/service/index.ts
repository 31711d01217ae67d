/**
 * The decision service (portier serve): configuration, the decision pipeline (decide/), its HTTP adapters and
 * operator app (http/) and gRPC port (grpc/), reload, cluster.
 */
export { loadConfig, ConfigError, SERVICE_OPTIONS, type ServiceConfig } from "./config.js";
export { startService, StartError, listenFailure, type RunningService } from "./start-service.js";
export { stopAccepting } from "./connection-drain.js";
export { createDecide, type Decide, type DecisionAnswer, type DecisionRequest } from "./decide/decide.js";
