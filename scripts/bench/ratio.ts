// The report's ratios: Slotkeeper's spike against the raw ceiling (scripts/bench.ts `ratio`).

/** A phase's two rates, each S over seconds from the due instant (stats.ts `spikeStats`). */
export type PhaseRates = { claimsPerSecond: number; completionsPerSecond: number };

export type CeilingRatios = {
  /** Starts/s over the mean of the ceiling's starts/s before and after the spike. */
  startsPerSecond: number;
  /** Completions/s over the mean of the ceiling's completions/s before and after. */
  completionsPerSecond: number;
  ofRawBefore: number;
  ofRawAfter: number;
  ofRawPlain: number | null;
  /**
   * False when the spike beat the ceiling on a rate by more than a tenth: a ceiling that a
   * Slotkeeper worker outruns is not measuring PostgreSQL's limit (as when its finish statement
   * ran a plan quadratic in the batch), and its ratios say nothing.
   */
  ceilingHeld: boolean;
};

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The target for a spike, plain or split over two handlers: starts/s at least this share of the raw ceiling. */
export const STARTS_TARGET_SHARE_OF_RAW = 0.9;

/**
 * Whether a spike's starts/s meets the target against `ceiling` (the mean of the raw phases'
 * starts/s); null without a ceiling (`--skip-raw`). Worked example: 45,000 starts/s against a
 * ceiling of 50,000 → 0.9, met; 44,999 → not met.
 */
export function startsMeetTarget(claimsPerSecond: number, ceiling: number | null): boolean | null {
  return ceiling ? claimsPerSecond >= STARTS_TARGET_SHARE_OF_RAW * ceiling : null;
}

/**
 * Rate over rate, like for like: starts/s over the ceiling's starts/s, completions/s over its
 * completions/s, each ceiling the mean of the phases on either side of the spike (this machine's
 * speed drifts within minutes). Rounded to 3 places. Worked example: starts 14,475/s and
 * completions 14,305/s against ceilings 56,984 and 38,768 starts/s, 55,000 and 37,000
 * completions/s → 14,475 / 47,876 = 0.302 and 14,305 / 46,000 = 0.311.
 */
export function ceilingRatios(spike: PhaseRates, before: PhaseRates, after: PhaseRates, plain: PhaseRates | null): CeilingRatios {
  const starts = (before.claimsPerSecond + after.claimsPerSecond) / 2;
  const done = (before.completionsPerSecond + after.completionsPerSecond) / 2;
  const share = (x: number) => round3(spike.claimsPerSecond / x);
  const startsRatio = share(starts);
  const doneRatio = round3(spike.completionsPerSecond / done);
  return {
    startsPerSecond: startsRatio,
    completionsPerSecond: doneRatio,
    ofRawBefore: share(before.claimsPerSecond),
    ofRawAfter: share(after.claimsPerSecond),
    ofRawPlain: plain ? share(plain.claimsPerSecond) : null,
    ceilingHeld: startsRatio <= 1.1 && doneRatio <= 1.1,
  };
}
