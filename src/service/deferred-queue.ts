/**
 * Work done after the answer, off the request path: items wait in a bounded first-in first-out queue and are
 * handed to `process` a batch per turn of the event loop (setImmediate by default), so that answers are never
 * held behind a long run. Past `max` waiting items an offer is refused and `dropped` is told (its owner counts
 * it under its own metric: never lost silently); `flush` processes everything waiting now (a stop). Shadow
 * evaluation and the decision-log pipeline defer through it. The list itself is denque's ring buffer, which the
 * collector's shipper also keeps its events in (its bound is in bytes over what waits and what is being sent, and
 * it drops the oldest, so that bound is its own).
 */
import Denque from "denque";

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
  private readonly waiting = new Denque<T>();
  private scheduled = false;
  private readonly batch: number;
  private readonly schedule: (run: () => void) => void;

  constructor(private readonly o: DeferredQueueOptions<T>) {
    this.batch = o.batch ?? Infinity;
    this.schedule = o.schedule ?? ((run) => void setImmediate(run));
  }

  /** Items waiting now (not those being processed). */
  get size(): number {
    return this.waiting.length;
  }

  /** Queues the item for a later turn; false (and `dropped`) when `max` items already wait. */
  offer(item: T): boolean {
    if (this.waiting.length >= this.o.max) {
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
    const n = Math.min(most, this.waiting.length);
    if (n > 0) {
      // One shift at a time: denque's remove(0, n) of all that waits would reallocate its whole ring each turn.
      const items: T[] = [];
      for (let i = 0; i < n; i++) items.push(this.waiting.shift()!);
      this.o.process(items);
    }
    if (this.waiting.length > 0) this.wake();
  }

  private wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.schedule(this.turn);
  }
}
