/**
 * Why the worker aborted an attempt: which of its limits fired. `timeout` is the schedule's own
 * timeoutSeconds (the attempt fails as timed_out and is retried after the schedule's backoff); a
 * lease deadline or a lost lease is timed_out too, retried at once; shutdown releases the run.
 */
export type AbortKind = "deadline" | "lease_lost" | "shutdown" | "timeout";

/** The reason an attempt was aborted with: its kind and a message for the run's history. */
export class AttemptAborted extends Error {
  constructor(
    readonly kind: AbortKind,
    message: string,
  ) {
    super(message);
    this.name = "AttemptAborted";
  }
}

/**
 * An attempt's abort switch, with its AbortSignal made only when the handler asks for one.
 *
 * Why not an AbortController per attempt: at the top of the hour a worker holds a thousand
 * attempts at once, and a controller with its signal, event target and listener per attempt is
 * CPU and long-lived garbage the collector has to promote. A no-op or quick handler never reads
 * `ctx.signal`, so it never pays for one.
 */
export class AttemptAbort {
  private controller?: AbortController;
  private onAbort?: (reason: AttemptAborted) => void;
  /** Set once: the first abort wins. */
  reason?: AttemptAborted;

  get aborted(): boolean {
    return this.reason !== undefined;
  }

  /** The AbortSignal handed to the handler; already aborted when the attempt was. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: AttemptAborted): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
    this.onAbort?.(reason);
  }

  /** Settle with `work`, or reject as soon as the attempt is aborted, whichever comes first (a handler that ignores its signal is not waited for). */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.reason) return Promise.reject(this.reason);
    return new Promise<T>((resolve, reject) => {
      this.onAbort = reject;
      work.then(
        (v) => {
          this.onAbort = undefined;
          resolve(v);
        },
        (e) => {
          this.onAbort = undefined;
          reject(e);
        },
      );
    });
  }
}
