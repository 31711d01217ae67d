/**
 * --decision-log-token-file: the collector's bearer token, read at start (a bad file is a start-up failure) and
 * read again whenever the file changes (checked before each upload: size, mtime and inode). A changed file
 * that is not a valid token (empty, too long, with spaces or control characters) is refused: the previous
 * token keeps being used and the refusal is reported (lastError), never the token itself.
 */
import { statSync } from "node:fs";
import { codeOf } from "../../errors/caught.js";
import { PortierError } from "../../errors/portier-error.js";
import { InputFileError, readInputFileSync } from "../../files/read-input-file.js";

export class TokenFileError extends PortierError {
  static override readonly code = "decision_log_token_file";
}

/** Longer than any bearer token an HTTP server takes in a header. */
const MAX_TOKEN_BYTES = 16_384;

function readToken(path: string): string {
  let text: string;
  try {
    text = readInputFileSync(path, MAX_TOKEN_BYTES).toString("utf8");
  } catch (err) {
    if (err instanceof InputFileError) throw new TokenFileError(`${err.message}; it must hold one bearer token`);
    throw new TokenFileError(`${path}: cannot read it (${codeOf(err) ?? "error"})`);
  }
  const token = text.trim();
  if (token === "") throw new TokenFileError(`${path}: empty; it must hold one bearer token`);
  if (!/^[\x21-\x7e]+$/.test(token))
    throw new TokenFileError(`${path}: must hold one bearer token (visible ASCII, no spaces or line breaks inside)`);
  return token;
}

export class TokenFile {
  private token: string;
  private stamp: string;
  lastError: string | undefined;

  constructor(readonly path: string) {
    this.stamp = this.stampNow();
    this.token = readToken(path);
  }

  private stampNow(): string {
    try {
      const s = statSync(this.path);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return "missing";
    }
  }

  /** The token, read again first if the file changed. */
  current(): string {
    const stamp = this.stampNow();
    if (stamp === this.stamp) return this.token;
    this.stamp = stamp;
    try {
      this.token = readToken(this.path);
      this.lastError = undefined;
    } catch (err) {
      this.lastError = err instanceof Error ? err.message : String(err);
    }
    return this.token;
  }
}
