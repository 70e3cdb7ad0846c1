/**
 * Every live schedule's body as a schedules file that apply accepts unchanged. Secrets are masked
 * as in every answer; applying the mask back keeps the stored value.
 */
import { stringify } from "yaml";
import { z } from "zod";
import type { Db } from "../../db/client";
import { maskSecrets } from "../../security/mask";
import { listSchedules } from "../queries";
import { specOfRow } from "./spec";

export const scheduleDocumentSchema = z.object({ schedules: z.array(z.record(z.string(), z.unknown())) }).strict();
export type ScheduleDocument = z.infer<typeof scheduleDocumentSchema>;

export async function exportSchedules(db: Db): Promise<ScheduleDocument> {
  const out: Record<string, unknown>[] = [];
  for (let cursor: string | undefined, page; (page = await listSchedules(db, { limit: 500, cursor })); ) {
    for (const row of page.schedules) {
      const { cron, everySeconds, ...spec } = specOfRow(row);
      out.push({ ...spec, ...(cron !== null ? { cron } : { everySeconds }), payload: maskSecrets(spec.payload) });
    }
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return { schedules: out };
}

export const documentToYaml = (doc: ScheduleDocument): string => stringify(doc);
