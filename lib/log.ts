import pino from "pino";

/**
 * One JSON line per event on stdout; keys follow `noun:verb:phase` in the `event` field. Writes
 * are synchronous so the last lines before a process exits are never lost.
 */
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? "info") {
  return pino(
    { name, level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: true }),
  );
}

export type Logger = ReturnType<typeof createLogger>;
