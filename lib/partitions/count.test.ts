import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { createSchedule } from "../schedules/mutations";
import { parseScheduleInput } from "../schedules/input";
import { setupTestDatabase } from "../testing/db";
import { makeRun } from "../testing/factories";
import { getPartitionCount, setPartitionCount } from "./count";

const t = setupTestDatabase({ clock: "2030-01-01T10:00:00Z" });

const create = (name: string) => createSchedule(t.db, parseScheduleInput({ name, handler: "noop", everySeconds: 60 }, "create"), SYSTEM_ACTOR);

/** Each schedule's partition, and whether every queued run (queue row and record) sits in its schedule's. */
async function placement() {
  const { rows } = await t.pool.query<{ id: number; partition: number }>("SELECT id, partition FROM schedules ORDER BY id");
  const { rows: off } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM run_queue q JOIN runs r ON r.id = q.run_id JOIN schedules s ON s.id = q.schedule_id
     WHERE q.partition <> s.partition OR r.partition <> s.partition`,
  );
  return { partitions: new Map(rows.map((r) => [Number(r.id), r.partition])), runsElsewhere: off[0].n };
}

describe("a schedule's partition", () => {
  it("is given by one rule on create and on re-partition: a count changed and changed back puts every schedule where it was created", async () => {
    const made = [];
    for (let i = 0; i < 40; i++) made.push(await create(`p-${i}`));
    for (const s of made.slice(0, 10)) await makeRun(t.db, { scheduleId: s.id, state: "pending" });
    for (const s of made.slice(10, 15)) await makeRun(t.db, { scheduleId: s.id, state: "dead" });
    for (const s of made.slice(15, 20)) await makeRun(t.db, { scheduleId: s.id, state: "running" });
    const created = await placement();
    expect(created.runsElsewhere).toBe(0);
    expect(await getPartitionCount(t.db)).toBe(16);

    expect((await setPartitionCount(t.db, 7)).changed).toBe(true);
    const seven = await placement();
    for (const p of seven.partitions.values()) expect(p).toBeGreaterThanOrEqual(0), expect(p).toBeLessThan(7);
    expect(seven.runsElsewhere).toBe(0);

    expect((await setPartitionCount(t.db, 16)).changed).toBe(true);
    const back = await placement();
    expect(back.partitions).toEqual(created.partitions);
    expect(back.runsElsewhere).toBe(0);
  });

  it("spreads schedules whose ids follow a pattern: every other one deleted still reaches most partitions", async () => {
    for (let i = 0; i < 64; i++) await create(`q-${i}`);
    await t.pool.query("DELETE FROM schedules WHERE id % 2 = 1");
    const used = new Set((await placement()).partitions.values());
    // Under id mod 16 the 32 even ids would fill exactly the 8 even partitions.
    expect(used.size).toBeGreaterThan(8);
  });
});
