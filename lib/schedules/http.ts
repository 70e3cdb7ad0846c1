import type { Db } from "../db/client";
import { loadConfig, type Config } from "../config";
import { AppError } from "../errors";
import type { Schedule } from "../db/schema";
import { toScheduleViewsWithHealth } from "./queries";

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

/** `{ schedule }`: one schedule as the API shows it, with its health. */
export async function scheduleResponse(db: Db, row: Schedule, status = 200): Promise<Response> {
  const [schedule] = await toScheduleViewsWithHealth(db, [row], webConfig().pollIntervalMs);
  return Response.json({ schedule }, { status });
}
