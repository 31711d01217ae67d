/**
 * Errors the engine throws while loading a bundle. Evaluation never throws: it answers a deny.
 */

export type EngineLoadErrorCode =
  | "bundle_unreadable"
  | "bundle_invalid"
  | "bundle_too_large"
  | "manifest_invalid"
  | "entrypoint_missing"
  | "wasm_invalid"
  | "data_invalid"
  | "signature_invalid";

export class EngineLoadError extends Error {
  readonly code: EngineLoadErrorCode;

  constructor(code: EngineLoadErrorCode, message: string) {
    super(message);
    this.name = "EngineLoadError";
    this.code = code;
  }
}
