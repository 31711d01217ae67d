/**
 * A candidate policy tried on live traffic (`--shadow-bundle`, `--shadow-bundle-url`): the recorder offers each
 * finished decision that reached the policy; a sampled one (`--shadow-sample`) is queued and evaluated by the
 * candidate after the answer has been sent (setImmediate, a few per turn of the event loop), on the very policy
 * input the enforced bundle evaluated. Only differences are reported: every verdict is counted by kind, and the
 * decision's log line, written once the candidate has answered, carries `shadow` when it differs. The candidate
 * never changes an answer: it sees the input after the answer was made and returns nothing to the pipeline.
 * Bounded: at most `maxBacklog` decisions wait; past that a decision is not shadowed (its line is written at once)
 * and counted as skipped. The candidate is loaded and reloaded by its own PolicyHolder (src/service/policy.ts).
 */
import type { DecisionInput } from "../../engine/types.js";
import { DeferredQueue } from "../deferred-queue.js";
import type { PolicySnapshot, PolicyStatus } from "../policy.js";
import { candidateVerdict, compareVerdicts, type ShadowChange, type Verdict } from "./compare.js";

/** What a differing decision's log line carries under `shadow`. */
export interface ShadowVerdict extends Verdict {
  revision: string;
}

/** Called once per taken decision, after the candidate's verdict: with it when it differs, else undefined. */
export type ShadowDone = (differs: ShadowVerdict | undefined) => void;

export type ShadowSkip = "backlog" | "no_candidate";

export interface ShadowOptions {
  /** Share of the policy's decisions shadowed, 0..1. */
  sample: number;
  /** Most decisions waiting for the candidate (default 1024). */
  maxBacklog?: number | undefined;
  /** Evaluations per turn of the event loop (default 32), so that answers are never held behind a long run. */
  batch?: number | undefined;
  random?: (() => number) | undefined;
  schedule?: ((run: () => void) => void) | undefined;
}

export interface ShadowStatus extends PolicyStatus {
  sample: number;
  decisions: Record<ShadowChange, number>;
  skipped: Record<ShadowSkip, number>;
  /** Decisions waiting for the candidate now. */
  backlog: number;
}

interface Pending {
  input: DecisionInput;
  enforced: Verdict;
  done: ShadowDone;
}

const DEFAULT_MAX_BACKLOG = 1024;
const DEFAULT_BATCH = 32;

export class Shadow {
  readonly decisions: Record<ShadowChange, number> = { new_allow: 0, new_deny: 0, other_reason: 0, same: 0 };
  readonly skipped: Record<ShadowSkip, number> = { backlog: 0, no_candidate: 0 };
  private readonly queue: DeferredQueue<Pending>;
  private readonly random: () => number;

  constructor(
    private readonly candidate: { readonly current: PolicySnapshot | undefined; status(): PolicyStatus },
    private readonly options: ShadowOptions,
  ) {
    if (!(options.sample >= 0 && options.sample <= 1)) throw new RangeError("shadow sample must be within 0..1");
    this.random = options.random ?? Math.random;
    this.queue = new DeferredQueue<Pending>({
      max: options.maxBacklog ?? DEFAULT_MAX_BACKLOG,
      batch: options.batch ?? DEFAULT_BATCH,
      schedule: options.schedule,
      process: (waiting) => waiting.forEach((p) => this.evaluate(p)),
      dropped: () => this.skipped.backlog++,
    });
  }

  /**
   * Offers a recorded decision. True: it is shadowed and `done` will be called once the candidate has answered
   * (the caller writes the log line then). False: not shadowed (no policy input, not sampled, no candidate
   * loaded, or the backlog is full); `done` is never called.
   */
  take(input: DecisionInput | undefined, enforced: Verdict, done: ShadowDone): boolean {
    if (input === undefined) return false;
    const sample = this.options.sample;
    if (sample < 1 && !(this.random() < sample)) return false;
    if (this.candidate.current === undefined) {
      this.skipped.no_candidate++;
      return false;
    }
    return this.queue.offer({ input, enforced: { allow: enforced.allow, reason: enforced.reason }, done });
  }

  /** Evaluates every waiting decision now (the service's stop: no log line is lost). */
  flush(): void {
    this.queue.flush();
  }

  status(): ShadowStatus {
    return {
      ...this.candidate.status(),
      sample: this.options.sample,
      decisions: { ...this.decisions },
      skipped: { ...this.skipped },
      backlog: this.queue.size,
    };
  }

  /**
   * One candidate verdict, then the decision's line. The engine answers a bad input or a policy failure with a
   * deny; anything it throws is read as the candidate failing closed (internal_error), never a crash.
   */
  private evaluate(p: Pending): void {
    // The live candidate, read once: a reload between two decisions changes the revision reported.
    const engine = this.candidate.current?.engine;
    if (engine === undefined) {
      this.skipped.no_candidate++;
      p.done(undefined);
      return;
    }
    let verdict: Verdict;
    try {
      verdict = candidateVerdict(engine.decide(p.input));
    } catch {
      verdict = { allow: false, reason: "internal_error" };
    }
    const change = compareVerdicts(p.enforced, verdict);
    this.decisions[change]++;
    p.done(change === "same" ? undefined : { ...verdict, revision: engine.revision });
  }
}
