// Preload for one chaos worker: `node --require tsx/cjs --require ./scripts/chaos/skew-clock.ts worker/main.ts`.
// Shifts this process's idea of wall time by SLOTKEEPER_CLOCK_SKEW_MS (Date.now and new Date()),
// without touching the worker's code. The database clock decides every due,
// expired and late comparison, so a worker minutes off must change nothing the oracle can see.
// Monotonic time (performance.now, process.hrtime, timers) is left alone on purpose: that is
// what a worker may legitimately use to watch its own lease.
const skewMs = Number.parseInt(process.env.SLOTKEEPER_CLOCK_SKEW_MS ?? "0", 10);

if (Number.isFinite(skewMs) && skewMs !== 0) {
  const RealDate = Date;
  const realNow = RealDate.now.bind(RealDate);
  class SkewedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(realNow() + skewMs);
      else super(...(args as [string | number | Date]));
    }
    static now(): number {
      return realNow() + skewMs;
    }
  }
  globalThis.Date = SkewedDate as DateConstructor;
}
