import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { getScheduleByName, requireScheduleByName, scheduleIdsByName } from "./queries";

const t = setupTestDatabase({ poolSize: 3 });

describe("looking a schedule up by name", () => {
  it("finds the live schedule, never a deleted one of the same name, and 404s naming the field", async () => {
    const old = await makeSchedule(t.db, { name: "report", deletedAt: new Date("2030-01-01T00:00:00Z") });
    const live = await makeSchedule(t.db, { name: "report" });
    expect((await getScheduleByName(t.db, "report"))?.id).toBe(live.id);
    expect(await getScheduleByName(t.db, "nope")).toBeNull();
    await expect(requireScheduleByName(t.db, "nope")).rejects.toMatchObject({ kind: "not_found", field: "name", message: 'no schedule named "nope"' });
    await expect(requireScheduleByName(t.db, "nope", { field: "schedule" })).rejects.toMatchObject({ field: "schedule" });
    // The runs of a name include those of its deleted schedules, which kept their history.
    expect((await scheduleIdsByName(t.db, "report")).sort()).toEqual([old.id, live.id].sort());
  });

  it("with lock, holds the row until the transaction ends: another writer cannot change it meanwhile", async () => {
    const s = await makeSchedule(t.db, { name: "locked" });
    await t.db.transaction(async (tx) => {
      expect((await requireScheduleByName(tx, "locked", { lock: true })).id).toBe(s.id);
      const other = await t.pool.connect();
      try {
        await other.query("SET lock_timeout = '100ms'");
        await expect(other.query("UPDATE schedules SET description = 'x' WHERE id = $1", [s.id])).rejects.toMatchObject({ code: "55P03" });
      } finally {
        other.release();
      }
    });
  });
});
