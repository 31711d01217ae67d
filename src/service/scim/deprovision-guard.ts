/**
 * The guard against a burst of de-provisioning: a misconfigured identity manager must not take every user of a
 * school board out in one sync. A step that turns synced users into not synced ones (a DELETE, `active: false`,
 * the loss of the sub or tenant) is refused (503 with Retry-After, nothing applied, counted and reported) when the
 * users so removed within the window, this step's included, exceed both a small floor and the allowed share of
 * the users synced before the window's removals. The identity manager retries the refused requests later; an
 * operator who means the purge raises --scim-max-deprovision-share (1 turns the guard off).
 */
export interface DeprovisionGuardOptions {
  /** Largest share (0..1) of the synced users removed within the window. */
  maxShare: number;
  windowMs: number;
  /** Removals within the window always allowed, whatever the share (small directories). */
  floor: number;
  now?: () => number;
}

export class DeprovisionGuard {
  private readonly removals: { at: number; users: number }[] = [];
  private inWindow = 0;
  /** Requests refused, and the last refusal. */
  held = 0;
  lastHeld: string | undefined;
  lastHeldAt: number | undefined;

  constructor(private readonly o: DeprovisionGuardOptions) {}

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  private expire(now: number): void {
    for (let first = this.removals[0]; first && first.at < now - this.o.windowMs; first = this.removals[0]) {
      this.inWindow -= first.users;
      this.removals.shift();
    }
  }

  /** Why a step removing `users` of `synced` (the count before the step) must be held, or undefined. */
  refusal(users: number, synced: number): string | undefined {
    if (users <= 0 || this.o.maxShare >= 1) return undefined;
    const now = this.now();
    this.expire(now);
    const total = this.inWindow + users;
    const reference = synced + this.inWindow;
    if (total <= this.o.floor || total <= reference * this.o.maxShare) return undefined;
    const why =
      `held: this change would take ${total} of ${reference} synced users out within ` +
      `${Math.round(this.o.windowMs / 1000)} s, more than the ${Math.round(this.o.maxShare * 100)}% allowed by ` +
      "--scim-max-deprovision-share; nothing was applied, retry later or raise the share";
    this.held++;
    this.lastHeld = why;
    this.lastHeldAt = now;
    return why;
  }

  /** A step that removed `users` was applied. */
  removed(users: number): void {
    if (users <= 0) return;
    const now = this.now();
    this.removals.push({ at: now, users });
    this.inWindow += users;
  }

  /** Seconds until the oldest removal leaves the window (a Retry-After). */
  retryAfterSeconds(): number {
    const first = this.removals[0];
    if (!first) return 60;
    return Math.max(1, Math.ceil((first.at + this.o.windowMs - this.now()) / 1000));
  }
}
