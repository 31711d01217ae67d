/**
 * A log destination for `portier dev` (`make run`): each JSON line of the service's logger rewritten for a
 * person at a terminal, one line each: a decision as "ALLOW GET /path  route  flow caller [roles] -> reason:
 * message", anything else as "LEVEL message (event): error". `portier serve` keeps its JSON lines.
 */
const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO ", 40: "WARN ", 50: "ERROR", 60: "FATAL" };

type Line = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function clock(time: unknown): string {
  return new Date(typeof time === "number" ? time : Date.now()).toISOString().slice(11, 19);
}

/** One log record in words; a line that is not JSON is kept as it is. */
export function readableLine(json: string): string {
  let l: Line;
  try {
    l = JSON.parse(json) as Line;
  } catch {
    return json;
  }
  if (l.event === "decision") {
    const who = str(l.sub) ?? str(l.client_id) ?? "no caller";
    const roles = Array.isArray(l.roles) && l.roles.length > 0 ? ` [${l.roles.join(", ")}]` : "";
    const path = str(l.path) ?? `${str(l.raw_path) ?? "?"} (invalid)`;
    const route = str(l.route) === undefined ? "" : `  ${str(l.route)}`;
    const detail = str(l.detail) === undefined ? "" : ` (${str(l.detail)})`;
    return (
      `${clock(l.time)} ${l.allow === true ? "ALLOW" : "DENY "} ${String(l.method)} ${path}${route}  ` +
      `${str(l.flow) ?? "no flow"} ${who}${roles} -> ${String(l.reason)}: ${str(l.message) ?? ""}${detail}`
    );
  }
  const level = (typeof l.level === "number" ? LEVELS[l.level] : undefined) ?? "INFO ";
  const event = str(l.event) === undefined ? "" : ` (${str(l.event)})`;
  const error = str(l.error) === undefined ? "" : `: ${str(l.error)}`;
  return `${clock(l.time)} ${level} ${str(l.msg) ?? ""}${event}${error}`;
}

/** A pino destination writing readable lines to `out` (stdout by default). */
export function readableLogDestination(out: (text: string) => void = (t) => void process.stdout.write(t)): {
  write(chunk: string): void;
} {
  return {
    write(chunk: string) {
      out(
        chunk
          .split("\n")
          .filter((l) => l.trim() !== "")
          .map((l) => `${readableLine(l)}\n`)
          .join(""),
      );
    },
  };
}
