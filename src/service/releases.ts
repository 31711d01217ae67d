/**
 * What a partially started service has acquired, released in reverse order when its start fails: one disposer
 * instead of a cleanup written out at every step that can fail (the shape of TC39's AsyncDisposableStack, which
 * Node 20 lacks).
 */
export class Releases {
  private readonly steps: (() => unknown)[] = [];

  /** Adds a release step, run before every step added earlier. */
  add(step: () => unknown): void {
    this.steps.push(step);
  }

  /** Runs every step once, newest first; one that throws does not keep the others from running. */
  async release(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch {
        // Releasing after a failed start: the start's own error is the one reported.
      }
    }
  }
}
