/**
 * The one base class of Portier's errors, at the bottom of the dependency graph (imports nothing, every
 * folder may import it). As jose's JOSEError, each subclass names its stable `code` once, as a static, and
 * every instance carries it; callers tell errors apart with `instanceof`, never by comparing strings.
 * A class whose errors come in a family of codes pinned elsewhere (TokenError, EngineLoadError, OAuthError)
 * lists them in a static `codes`, and each instance carries one of them.
 *
 * As node-oidc-provider's error_description / error_detail: `message` is the public text, the one a caller
 * may read in an answer; `detail` is the internal one (a wasm trap's text, a library's message), for the
 * log line (and the operator's terminal) only, never for an answer.
 */

export interface PortierErrorOptions {
  /** One of the class's `codes` (a family); default: the class's `code`. */
  code?: string;
  /** Internal detail: logged, never answered. */
  detail?: string;
  cause?: unknown;
}

export class PortierError extends Error {
  /** The stable code of this class's errors. */
  static readonly code: string = "portier_error";

  /** Every code an instance of this class may carry: its `code`, or the family's list. */
  static get codes(): readonly string[] {
    return [this.code];
  }

  readonly code: string;
  /** Internal detail: for the log line only, never for an answer. */
  readonly detail: string | undefined;

  constructor(message: string, options: PortierErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const cls = new.target;
    this.name = cls.name;
    this.code = options.code ?? cls.code;
    this.detail = options.detail;
  }
}
