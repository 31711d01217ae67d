/**
 * The users of the SCIM state, each kept as its JSON text and parsed when a request reads it. A million users
 * held as parsed objects take several times the heap of their text; a replica reads few of them (a GET, the plan
 * of a write, a filter without an index), so each read pays one JSON.parse and gets an object of its own (a
 * caller may change it without changing what is held). The Map-like reads keep insertion order, as a Map does.
 */
import type { ScimResource } from "./resources.js";

export class ResourceTable {
  private readonly texts = new Map<string, string>();

  get size(): number {
    return this.texts.size;
  }

  has(id: string): boolean {
    return this.texts.has(id);
  }

  /** The resource, parsed from its text (a new object at each call), or undefined when absent. */
  get(id: string): ScimResource | undefined {
    const text = this.texts.get(id);
    return text === undefined ? undefined : (JSON.parse(text) as ScimResource);
  }

  /** Keeps the resource as JSON text; `text` when the caller has it already (a row read from the store). */
  set(id: string, resource: ScimResource, text?: string): void {
    this.texts.set(id, text ?? JSON.stringify(resource));
  }

  delete(id: string): boolean {
    return this.texts.delete(id);
  }

  keys(): IterableIterator<string> {
    return this.texts.keys();
  }

  /** Every resource, parsed one at a time as the iteration reaches it. */
  *values(): IterableIterator<ScimResource> {
    for (const text of this.texts.values()) yield JSON.parse(text) as ScimResource;
  }

  *entries(): IterableIterator<[string, ScimResource]> {
    for (const [id, text] of this.texts) yield [id, JSON.parse(text) as ScimResource];
  }

  [Symbol.iterator](): IterableIterator<[string, ScimResource]> {
    return this.entries();
  }
}
