/**
 * Work done after the answer, off the request path: items wait in a bounded first-in first-out queue and are
 * handed to `process` a batch per turn of the event loop (setImmediate by default), so that answers are never
 * held behind a long run. Past `max` waiting items an offer is refused and `dropped` is told (its owner counts
 * it under its own metric: never lost silently); `flush` processes everything waiting now (a stop). Shadow
 * evaluation and the decision-log pipeline defer through DeferredQueue; the collector's shipper keeps its events
 * in a Fifo (its bound is in bytes over what waits and what is being sent, and it drops the oldest, so it is its
 * own).
 */

/** A first-in first-out list: push at the back, take from the front, in amortised constant time. */
export class Fifo<T> {
  /** Waiting items from `head` on (the slots before it are taken and cleared). */
  private items: (T | undefined)[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    this.compact();
    return item;
  }

  /** Up to `n` of the oldest items, removed, oldest first. */
  take(n: number): T[] {
    if (n >= this.size) {
      // All of them: the array itself is handed over when nothing was taken from it yet.
      const all = (this.head === 0 ? this.items : this.items.slice(this.head)) as T[];
      this.items = [];
      this.head = 0;
      return all;
    }
    const out = this.items.slice(this.head, this.head + n) as T[];
    this.items.fill(undefined, this.head, this.head + n);
    this.head += n;
    this.compact();
    return out;
  }

  /** Taken slots are released once the queue is empty, or once they are most of an array that never empties. */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}

export interface DeferredQueueOptions<T> {
  /** Most items waiting; an offer past it is refused. */
  max: number;
  /** Most items handed to `process` per turn of the event loop (default: all that wait). */
  batch?: number | undefined;
  /** Processes items in the order offered; should not throw (what it throws is the scheduler's). */
  process(items: T[]): void;
  /** Told of every refused item (the queue was full). */
  dropped(item: T): void;
  /** Runs `run` on a later turn of the event loop (default setImmediate; tests run turns by hand). */
  schedule?: ((run: () => void) => void) | undefined;
}

export class DeferredQueue<T> {
  private readonly waiting = new Fifo<T>();
  private scheduled = false;
  private readonly batch: number;
  private readonly schedule: (run: () => void) => void;

  constructor(private readonly o: DeferredQueueOptions<T>) {
    this.batch = o.batch ?? Infinity;
    this.schedule = o.schedule ?? ((run) => void setImmediate(run));
  }

  /** Items waiting now (not those being processed). */
  get size(): number {
    return this.waiting.size;
  }

  /** Queues the item for a later turn; false (and `dropped`) when `max` items already wait. */
  offer(item: T): boolean {
    if (this.waiting.size >= this.o.max) {
      this.o.dropped(item);
      return false;
    }
    this.waiting.push(item);
    this.wake();
    return true;
  }

  /** Processes everything waiting now. */
  flush(): void {
    this.run(Infinity);
  }

  private readonly turn = (): void => this.run(this.batch);

  private run(most: number): void {
    this.scheduled = false;
    if (this.waiting.size > 0) this.o.process(this.waiting.take(most));
    if (this.waiting.size > 0) this.wake();
  }

  private wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(this.turn);
  }
}
