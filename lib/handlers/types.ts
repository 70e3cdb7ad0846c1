import type { Logger } from "../log";

/** What a handler is given for one attempt of one run. */
export type HandlerContext<P = unknown> = {
  schedule: { id: number; name: string };
  /** The slot (runs.scheduled_for): the run's identity, the same on every attempt. */
  slot: Date;
  /** Schedule + slot (`sk:<scheduleId>:<ISO slot>`), the same on every attempt: hand it to whatever you call. */
  idempotencyKey: string;
  /** The attempt counter, rising on every claim: reject writes that carry a lower one. */
  fencingToken: number;
  /** 1 for the first attempt; equal to fencingToken. */
  attempt: number;
  runId: number;
  origin: "schedule" | "catch_up" | "manual" | "backfill";
  /** The schedule's payload (JSON). */
  payload: P;
  /** Fires when the worker's lease deadline passes, the lease is lost, or the worker shuts down. */
  signal: AbortSignal;
  /** A pino child logger that already names the run, slot and attempt; its lines (info and above) are also kept with the attempt and shown on the run page. */
  log: Logger;
  /** The worker running this attempt. */
  workerId: string;
};

/** A job Slotkeeper can run. `idempotent: false` shows the warning "this job may run twice". */
export type Handler<P = unknown> = {
  name: string;
  /** True when running the same slot twice is harmless (it uses the idempotency key or the fencing token). */
  idempotent: boolean;
  description: string;
  /** Resolve for success, throw to retry (NonRetryableError: dead at once). What it returns is kept as the attempt's result (JSON, up to 16 KB). */
  run: (ctx: HandlerContext<P>) => Promise<unknown> | unknown;
};

/** The warning shown for handlers that do not declare themselves idempotent. */
export const NOT_IDEMPOTENT_WARNING = "this job may run twice";

/** Define a handler with a typed payload; a no-op at runtime that checks the shape once. */
export function defineHandler<P = unknown>(h: Handler<P>): Handler<P> {
  if (!/^[a-z0-9][a-z0-9._:-]{0,99}$/i.test(h.name)) throw new TypeError(`handler name ${JSON.stringify(h.name)} must be 1-100 letters, digits, . _ : -`);
  if (typeof h.idempotent !== "boolean") throw new TypeError(`handler ${h.name} must declare idempotent: true or false`);
  if (typeof h.run !== "function") throw new TypeError(`handler ${h.name} needs a run(ctx) function`);
  return h;
}

/** Throw this from a handler when retrying cannot help (bad input, 4xx): the run goes dead at once. */
export class NonRetryableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "NonRetryableError";
  }
}

/** True for a NonRetryableError, also across module copies (checks the name). */
export function isNonRetryable(err: unknown): boolean {
  return err instanceof NonRetryableError || (err instanceof Error && err.name === "NonRetryableError");
}
