// Alert channels limited to tags: a channel with tags hears only schedules carrying one of them,
// a channel without tags hears every schedule. Checked on the deliveries queued per channel.
import { describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { evaluateAlerts } from "./evaluate";

const t = setupTestDatabase();

describe("alert channels limited to tags", () => {
  it("sends each schedule's alert to the untagged channel and to the channels sharing one of its tags", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const schedules = [
      { name: "billing-job", tags: ["billing"] },
      { name: "payments-job", tags: ["payments", "eu"] },
      { name: "plain-job", tags: [] as string[] },
    ];
    for (const s of schedules) {
      const { id } = await makeSchedule(t.db, { name: s.name, everySeconds: 300, tags: s.tags });
      await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T08:55:00Z"), state: "dead", finishedAt: new Date("2030-01-01T08:55:05Z"), attempts: 6 });
    }
    const channels = [
      { name: "everyone", tags: [] as string[] },
      { name: "billing-team", tags: ["billing"] },
      { name: "money", tags: ["billing", "payments"] },
      { name: "search-team", tags: ["search"] },
    ];
    for (const c of channels) {
      await t.pool.query("INSERT INTO alert_channels (name, kind, config, tags) VALUES ($1, 'webhook', '{\"url\":\"http://127.0.0.1:9/\"}', $2)", [c.name, c.tags]);
    }
    await setClock(t.pool, "2030-01-01T09:00:10Z");
    await evaluateAlerts(t.db, { publicUrl: "http://console.test", reminderSeconds: 3600 });

    const { rows } = await t.pool.query<{ channel: string; schedule: string }>(
      `SELECT c.name AS channel, e.schedule_name AS schedule FROM alert_deliveries d
       JOIN alert_channels c ON c.id = d.channel_id JOIN alert_events e ON e.id = d.event_id WHERE e.rule = 'failing'`,
    );
    const got = rows.map((r) => `${r.channel} <- ${r.schedule}`).sort();
    // The oracle: every (channel, schedule) pair where the channel is untagged or shares a tag.
    const expected = channels.flatMap((c) => schedules.filter((s) => c.tags.length === 0 || c.tags.some((tag) => s.tags.includes(tag))).map((s) => `${c.name} <- ${s.name}`)).sort();
    expect(expected).toContain("money <- payments-job");
    expect(got).toEqual(expected);
  });
});
