/**
 * Walks a parsed JSON or YAML document (a shipped gateway configuration) by a dotted path of keys and list
 * indexes, "static_resources.listeners.0.filter_chains": the value there, or undefined for a missing last step.
 * Walking through a value that is not an object throws, naming the path, as the `a.b.c` it replaces did.
 */
export function at(doc: unknown, path: string): unknown {
  let node = doc;
  let walked = "";
  for (const step of path.split(".")) {
    if (node === null || typeof node !== "object")
      throw new TypeError(`${path}: ${walked || "the document"} is not an object or a list`);
    node = (node as Record<string, unknown>)[step];
    walked = walked ? `${walked}.${step}` : step;
  }
  return node;
}

/** A node of such a document: an object whose members a test reads with at() or compares with expect(). */
export type DocNode = Record<string, unknown>;
