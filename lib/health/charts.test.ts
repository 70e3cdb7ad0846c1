import { expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { getHealthCharts } from "./charts";

const t = setupTestDatabase({ poolSize: 4 });

const run = (scheduleId: number, slot: string, state: "pending" | "done" | "dead", startedAt: string | null, finishedAt: string | null) =>
  makeRun(t.db, { scheduleId, scheduledFor: new Date(slot), state, startedAt: startedAt ? new Date(startedAt) : null, finishedAt: finishedAt ? new Date(finishedAt) : null });

it("buckets outcomes, since-last-success and oldest pending age over the window", async () => {
  await setClock(t.pool, "2030-01-01T10:00:30Z");
  const { id } = await makeSchedule(t.db, { name: "m" });
  await run(id, "2030-01-01T08:00:00Z", "done", "2030-01-01T08:00:01Z", "2030-01-01T08:00:02Z"); // before the window
  await run(id, "2030-01-01T09:30:00Z", "done", "2030-01-01T09:30:01Z", "2030-01-01T09:30:05Z");
  await run(id, "2030-01-01T09:40:00Z", "dead", "2030-01-01T09:40:01Z", "2030-01-01T09:40:02Z");
  await run(id, "2030-01-01T09:58:00Z", "pending", null, null);

  const c = await getHealthCharts(t.db, [{ id, name: "m" }], "1h");
  expect(c.outcomes).toHaveLength(60);
  expect(c.from).toBe("2030-01-01T09:01:00.000Z");
  expect(c.to).toBe("2030-01-01T10:01:00.000Z");
  const at = (iso: string) => c.outcomes.findIndex((p) => p.t === iso);
  expect(c.outcomes[at("2030-01-01T09:30:00.000Z")]).toMatchObject({ done: 1, dead: 0 });
  expect(c.outcomes[at("2030-01-01T09:40:00.000Z")]).toMatchObject({ dead: 1 });
  expect(c.outcomes[at("2030-01-01T09:58:00.000Z")]).toMatchObject({ waiting: 1 });
  // Before 09:30 the last success was at 08:00:02; sample 09:02 → 3,718 s.
  expect(c.sinceLastSuccess[0][`s${id}`]).toBe(3718);
  // Sample 09:31 (end of bucket 09:30) → 55 s after 09:30:05; the last sample is now (10:00:30).
  expect(c.sinceLastSuccess[at("2030-01-01T09:30:00.000Z")][`s${id}`]).toBe(55);
  expect(c.sinceLastSuccess[59][`s${id}`]).toBe(1825);
  // The pending 09:58 slot: 60 s old at 09:59, 150 s at now; nothing pending at 09:57.
  expect(c.oldestPendingAge[at("2030-01-01T09:58:00.000Z")][`s${id}`]).toBe(60);
  expect(c.oldestPendingAge[59][`s${id}`]).toBe(150);
  expect(c.oldestPendingAge[at("2030-01-01T09:56:00.000Z")][`s${id}`]).toBe(0);
});

it("leaves since-last-success empty before a schedule's first success", async () => {
  await setClock(t.pool, "2030-01-02T10:00:30Z");
  const { id } = await makeSchedule(t.db, { name: "fresh" });
  await run(id, "2030-01-02T09:50:00Z", "done", "2030-01-02T09:50:01Z", "2030-01-02T09:50:02Z");
  const c = await getHealthCharts(t.db, [{ id, name: "fresh" }], "1h");
  expect(c.sinceLastSuccess[0][`s${id}`]).toBeNull();
  expect(c.sinceLastSuccess[59][`s${id}`]).toBe(628);
});
