import { InvalidArgumentError } from "commander";
import type { SlotkeeperClient } from "../lib/client/slotkeeper-client";
import type { Output } from "./output";

/** What every verb gets: the API client and where to print. */
export type Context = { client: () => SlotkeeperClient; output: () => Output; stdin: () => Promise<string> };

/** A run id argument: a positive integer, else a usage error (exit 2). */
export function runId(raw: string): number {
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < 1) throw new InvalidArgumentError("a run id is a positive integer");
  return Number(raw);
}

/** A whole-number option (limits). */
export function positiveInt(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new InvalidArgumentError("must be a positive whole number");
  return Number(raw);
}

/** A JSON object option (a payload), else a usage error. */
export function jsonObject(raw: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (err) {
    throw new InvalidArgumentError(`not JSON: ${(err as Error).message}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new InvalidArgumentError("must be a JSON object");
  return v as Record<string, unknown>;
}
