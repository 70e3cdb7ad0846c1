import type { Db } from "../db/client";
import { loadConfig, type Config } from "../config";
import { AppError } from "../errors";
import type { Schedule } from "../db/schema";
import { outboundUrlWarning } from "../security/outbound";
import { toScheduleViewsWithHealth } from "./queries";
import { unregisteredHandlerWarning } from "../handlers/warnings";

/** Something worth knowing about a saved input that did not stop the save, beside the field it concerns. */
export type FieldWarning = { field: string; message: string };

let config: Config | undefined;

/** The web process's config, parsed once. */
export function webConfig(): Config {
  config ??= loadConfig();
  return config;
}

/** A schedule name from the URL: Next may hand it over still percent-encoded; names never contain "%". */
export function nameParam(raw: string): string {
  try {
    return raw.includes("%") ? decodeURIComponent(raw) : raw;
  } catch {
    throw new AppError("invalid", "the schedule name in the URL is not valid percent-encoding", "name");
  }
}

/**
 * Warnings for a saved schedule: a handler no worker has registered (its runs wait pending until a
 * worker that has it starts), and an `http` schedule whose URL the outbound address policy refuses
 * from this process. Not refusals: the workers run elsewhere, with their own handlers, network and
 * SLOTKEEPER_OUTBOUND_ALLOW, and they check again on every attempt.
 */
export async function scheduleWarnings(db: Db, row: Pick<Schedule, "handler" | "payload">): Promise<FieldWarning[]> {
  const warnings: FieldWarning[] = [];
  const unregistered = await unregisteredHandlerWarning(db, row.handler);
  if (unregistered) warnings.push({ field: "handler", message: unregistered });
  const url = (row.payload as { url?: unknown } | null)?.url;
  if (row.handler !== "http" || typeof url !== "string") return warnings;
  const message = await outboundUrlWarning(url);
  if (message) warnings.push({ field: "payload.url", message: `${message}. The schedule is saved; its runs will fail unless the workers allow this address.` });
  return warnings;
}

/** `{ schedule }`: one schedule as the API shows it, with its health (and, after a save, `warnings`). */
export async function scheduleResponse(db: Db, row: Schedule, status = 200, opts: { warn?: boolean } = {}): Promise<Response> {
  const [schedule] = await toScheduleViewsWithHealth(db, [row], webConfig().pollIntervalMs);
  return Response.json(opts.warn ? { schedule, warnings: await scheduleWarnings(db, row) } : { schedule }, { status });
}
