import { describe, expect, it } from "vitest";
import type { ApiCall } from "./api";
import { checkWholeChanges } from "./console-faults";
import { SYSTEM_ACTOR } from "../../lib/audit/record";
import { parseScheduleInput } from "../../lib/schedules/input";
import { createSchedule, pauseSchedule, updateSchedule } from "../../lib/schedules/mutations";
import { setupTestDatabase } from "../../lib/testing/db";

const t = setupTestDatabase();

const call = (kind: ApiCall["kind"], target: string, acked: boolean, expect?: ApiCall["expect"]): ApiCall => ({ kind, target, startedAt: 0, endedAt: 0, status: acked ? 200 : 0, acked, expect });
const create = (name: string) => createSchedule(t.db, parseScheduleInput({ name, handler: "noop", everySeconds: 60 }, "create"), SYSTEM_ACTOR);

// The "never half" check on changes made through the real mutations, and on rows changed behind
// their back the way a change that applied in part would leave them.
describe("checkWholeChanges", () => {
  it("passes changes made by the mutations, answered or not", async () => {
    const s = await create("whole-a");
    const edited = await updateSchedule(t.db, "whole-a", { description: "one" }, s.version, SYSTEM_ACTOR);
    await pauseSchedule(t.db, "whole-a", SYSTEM_ACTOR);
    await updateSchedule(t.db, "whole-a", { description: "two" }, edited.version + 1, SYSTEM_ACTOR);
    const calls = [call("create", "whole-a", true), call("edit", "whole-a", true, { description: "one" }), call("pause", "whole-a", false), call("edit", "whole-a", false, { description: "two" }), call("edit", "whole-a", false, { description: "never sent" }), call("create", "whole-never", false)];
    expect(await checkWholeChanges(t.pool, calls)).toEqual({ half: [], ackedWithoutRecord: [] });
  });

  it("finds a change without its record, a version bump without a change, and an acknowledged edit that left nothing", async () => {
    await create("whole-b");
    await t.pool.query("UPDATE schedules SET description = 'unrecorded' WHERE name = 'whole-b'");
    await create("whole-c");
    await t.pool.query("UPDATE schedules SET version = version + 1 WHERE name = 'whole-c'");
    const calls = [call("edit", "whole-b", false, { description: "unrecorded" }), call("edit", "whole-c", true, { description: "acked but gone" })];
    const r = await checkWholeChanges(t.pool, calls);
    expect(r.half).toEqual(
      expect.arrayContaining([
        { kind: "edit", target: "whole-b", why: 'description "unrecorded" without its update record' },
        { kind: "version", target: "whole-c", why: "version 2, 0 audited changes" },
      ]),
    );
    expect(r.ackedWithoutRecord).toEqual([{ kind: "edit", target: "whole-c" }]);
  });

  it("finds a create record whose schedule is missing", async () => {
    await create("whole-d");
    await t.pool.query("DELETE FROM schedules WHERE name = 'whole-d'");
    const r = await checkWholeChanges(t.pool, [call("create", "whole-d", true)]);
    expect(r.half).toContainEqual({ kind: "create", target: "whole-d", why: "create record without the schedule" });
    expect(r.ackedWithoutRecord).toContainEqual({ kind: "create", target: "whole-d" });
  });
});
