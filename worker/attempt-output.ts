import type { Logger } from "../lib/log";
import { boundResult, LogTail, logLineOf, StreamTail, type AttemptOutput } from "../lib/runs/output";
import { MIN_MASKED_VALUE_LENGTH, secretValuesOf } from "../lib/security/mask";

const LEVELS = ["fatal", "error", "warn", "info", "debug", "trace"] as const;
/** Levels an attempt keeps whatever the worker's LOG_LEVEL (a worker logging at warn still shows a run's info lines); debug and trace only when enabled. */
const KEPT_ALWAYS = new Set<string>(["fatal", "error", "warn", "info"]);

/**
 * Where a handler that runs a program hands over its stdout and stderr (the `command` handler does).
 * Read as `ctx[ATTEMPT_STREAMS]`: a symbol rather than a field of HandlerContext, since it is how a
 * built-in reaches the attempt's record, not part of the handler API.
 */
export const ATTEMPT_STREAMS = Symbol.for("slotkeeper.attemptStreams");

/** The stdout and stderr tails of one attempt, plus secrets to mask beyond the payload's (the program's inherited environment). */
export type AttemptStreams = { stdout: StreamTail; stderr: StreamTail; addSecrets: (values: readonly string[]) => void };

/**
 * One attempt's output while it runs: made only when the handler first logs or runs a program, so
 * an attempt that does neither and returns nothing (a no-op at the top of the hour) allocates none
 * of it and its result carries no output.
 */
export class AttemptOutputCollector {
  private secretList?: string[];
  private extraSecrets: string[] = [];
  private logTail?: LogTail;
  private streams?: AttemptStreams;

  /** `rawPayload` is the payload before `{ "$env" }` references were resolved: the secrets to mask come from it. */
  constructor(private readonly rawPayload: () => unknown) {}

  /** Secret values to mask in everything this attempt leaves: the payload's (secretValuesOf) and any a handler added; computed once, on first need. */
  secrets = (): readonly string[] => {
    if (!this.secretList) {
      let fromPayload: string[] = [];
      try {
        fromPayload = secretValuesOf(this.rawPayload());
      } catch {
        // A payload that does not parse fails the attempt elsewhere; there is nothing of it to mask.
      }
      this.secretList = [...new Set([...fromPayload, ...this.extraSecrets])].sort((a, b) => b.length - a.length);
    }
    return this.secretList;
  };

  /**
   * A logger that writes to `log` exactly as before (the worker's JSON log) and also keeps each
   * line in the attempt's tail: info and above always, debug and trace when `log` has them
   * enabled; children of it keep theirs there too.
   */
  capture(log: Logger): Logger {
    const tail = (this.logTail ??= new LogTail(this.secrets));
    // `bindings` are those of children made from the captured logger (the run's own are known).
    const wrap = (inner: Logger, bindings: Record<string, unknown>): Logger => {
      const outer = Object.create(inner) as Logger;
      for (const level of LEVELS) {
        (outer as unknown as Record<string, (...args: unknown[]) => void>)[level] = (...args: unknown[]) => {
          (inner[level] as (...a: unknown[]) => void)(...args);
          if (KEPT_ALWAYS.has(level) || inner.isLevelEnabled(level)) tail.push(logLineOf(level, args, bindings));
        };
      }
      outer.child = ((more: Record<string, unknown>, options?: object) => wrap(inner.child(more, options), { ...bindings, ...more })) as unknown as Logger["child"];
      return outer;
    };
    return wrap(log, {});
  }

  /** The attempt's stdout and stderr tails, made on first use. */
  attemptStreams(): AttemptStreams {
    return (this.streams ??= {
      stdout: new StreamTail(),
      stderr: new StreamTail(),
      addSecrets: (values) => {
        this.extraSecrets.push(...values.filter((v) => v.length >= MIN_MASKED_VALUE_LENGTH));
        this.secretList = undefined;
      },
    });
  }

  /** Everything the attempt left, bounded and masked, with `returned` as its result; undefined when it left nothing. */
  finish(returned: unknown): AttemptOutput | undefined {
    const secrets = this.secrets();
    const output: AttemptOutput = {
      result: boundResult(returned, secrets),
      log: this.logTail?.toJson() ?? null,
      stdout: this.streams?.stdout.text(secrets) ?? null,
      stderr: this.streams?.stderr.text(secrets) ?? null,
    };
    return output.result === null && output.log === null && output.stdout === null && output.stderr === null ? undefined : output;
  }
}

/** The output of an attempt that only returned a value (no log, no program): undefined for nothing. */
export function resultOnly(returned: unknown, rawPayload: () => unknown): AttemptOutput | undefined {
  if (returned === undefined || returned === null) return undefined;
  return new AttemptOutputCollector(rawPayload).finish(returned);
}
