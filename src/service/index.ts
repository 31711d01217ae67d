/**
 * The decision service (portier serve): configuration, the Express app and its adapters, reload, cluster.
 */
export { loadConfig, ConfigError, DEFAULT_BUNDLE, SERVICE_OPTIONS, CONFIG_SCHEMA, type ServiceConfig } from "./config.js";
export { startService, StartError, type RunningService } from "./start-service.js";
export { createDecide, type Decide, type DecisionAnswer, type DecisionRequest } from "./decide.js";
export { createApp } from "./app.js";
export { PolicyHolder } from "./policy.js";
