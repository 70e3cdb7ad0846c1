import { configDefaults } from "../../lib/config";
import type { Logger } from "../../lib/log";

/** A periodic pass: timing, failure counting and shutdown around one `lib/` function. */
export type LoopOptions = {
  name: string;
  intervalMs: number;
  /**
   * One pass. Returns true when it did work and the next pass should come at once, or a number of
   * ms when the next pass should come sooner than the interval (it knows when work comes due).
   */
  run: (signal: AbortSignal) => Promise<boolean | number | void>;
  log: Logger;
  /** Upper bound of the delay after consecutive failures (default configDefaults.loopMaxBackoffMs, part of the stated database-outage allowance). */
  maxBackoffMs?: number;
};

export type Loop = { stop: () => Promise<void>; wake: () => void };

/**
 * Run `run` every `intervalMs` until stopped. A failed pass is logged, counted (consecutive
 * failures back off up to maxBackoffMs) and retried: loops never exit on a transient error.
 */
export function startLoop(opts: LoopOptions): Loop {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let wakeResolve: (() => void) | undefined;
  let contiguousErrors = 0;
  const maxBackoff = opts.maxBackoffMs ?? configDefaults.loopMaxBackoffMs;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      wakeResolve = resolve;
      timer = setTimeout(resolve, ms);
    });

  const done = (async () => {
    while (!controller.signal.aborted) {
      let next: boolean | number | void = undefined;
      try {
        next = await opts.run(controller.signal);
        if (contiguousErrors > 0) opts.log.info({ event: `${opts.name}:recovered`, after: contiguousErrors });
        contiguousErrors = 0;
      } catch (err) {
        contiguousErrors++;
        opts.log.error({ event: `${opts.name}:error`, err, contiguousErrors });
      }
      if (controller.signal.aborted) break;
      const delay =
        contiguousErrors > 0
          ? Math.min(maxBackoff, opts.intervalMs * 2 ** Math.min(contiguousErrors, 10))
          : next === true
            ? 0
            : typeof next === "number"
              ? Math.max(1, Math.min(next, opts.intervalMs))
              : opts.intervalMs;
      if (delay > 0) await sleep(delay);
      else await new Promise((r) => setImmediate(r));
    }
  })();

  return {
    wake: () => {
      clearTimeout(timer);
      wakeResolve?.();
    },
    stop: async () => {
      controller.abort();
      clearTimeout(timer);
      wakeResolve?.();
      await done;
    },
  };
}
