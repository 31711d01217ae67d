/**
 * SCIM errors as RFC 7644 section 3.12 writes them: an HTTP status, an optional scimType keyword and a detail a
 * person can read. Thrown anywhere in the SCIM service and answered by the router's error handler.
 */
import { PortierError } from "../../errors/portier-error.js";

export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";

export type ScimType =
  | "invalidFilter"
  | "tooMany"
  | "uniqueness"
  | "mutability"
  | "invalidSyntax"
  | "invalidPath"
  | "noTarget"
  | "invalidValue"
  | "invalidVers"
  | "sensitive";

export class ScimError extends PortierError {
  static override readonly code = "scim_error";
  constructor(
    readonly status: number,
    readonly scimType: ScimType | undefined,
    detail: string,
    /** Seconds after which the client may retry (503 answers). */
    readonly retryAfter?: number,
  ) {
    super(detail);
  }

  body(): Record<string, unknown> {
    return {
      schemas: [ERROR_SCHEMA],
      status: String(this.status),
      ...(this.scimType ? { scimType: this.scimType } : {}),
      detail: this.message,
    };
  }
}
