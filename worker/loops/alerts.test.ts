import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createPool, type Db } from "../../lib/db/client";
import { createLogger } from "../../lib/log";
import { setClock } from "../../lib/testing/clock";
import { setupTestDatabase } from "../../lib/testing/db";
import { makeRun, makeSchedule } from "../../lib/testing/factories";
import { startReceiver } from "../../lib/testing/receiver";
import { startAlertLoop } from "./alerts";
import { startDeliveryLoop } from "./deliveries";
import type { Loop } from "./loop";

// The receivers below listen on loopback, which the outbound address policy refuses unless opened.
process.env.SLOTKEEPER_OUTBOUND_ALLOW = "127.0.0.1,::1,localhost";

const t = setupTestDatabase({ poolSize: 2 });
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dbs: Db[];
let loops: Loop[] = [];
const log = createLogger("test", "silent");
const config = { alertIntervalSeconds: 1, alertReminderMinutes: 60, publicUrl: "http://console.test", smtpUrl: undefined, smtpFrom: "x@y" };

beforeAll(async () => {
  receiver = await startReceiver();
  dbs = [0, 1, 2].map(() => createDb(createPool(t.url, { max: 2 })));
});
afterAll(async () => {
  await Promise.all(loops.map((l) => l.stop()));
  await Promise.all((dbs ?? []).map((d) => d.$client.end()));
  await receiver?.close();
});

/** Poll (real time, short) until `check` holds: the loops run on their own timers. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    loops.forEach((l) => l.wake());
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

describe("alert and delivery loops on three workers", () => {
  it("send one webhook when a schedule goes late and one when it recovers, with no browser open", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const id = (await makeSchedule(t.db, { name: "billing-sync", everySeconds: 300 })).id;
    await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T09:55:00Z"), state: "done", finishedAt: new Date("2030-01-01T09:55:00Z") });
    await t.pool.query("INSERT INTO alert_channels (name, kind, config) VALUES ('hook', 'webhook', $1)", [JSON.stringify({ url: `${receiver.url}/hook` })]);
    await setClock(t.pool, "2030-01-01T10:00:00Z");
    // Three workers, each with an evaluation loop and a delivery loop.
    for (const db of dbs) {
      const delivery = startDeliveryLoop({ db, log, config });
      loops.push(delivery, startAlertLoop({ db, log, config, onEvents: () => delivery.wake() }));
    }

    await setClock(t.pool, "2030-01-01T10:05:31Z"); // 631 s since the last success
    await eventually(() => receiver.received.length >= 1);
    await setClock(t.pool, "2030-01-01T10:06:00Z");
    // Many more passes on all three workers: still one notification.
    for (let i = 0; i < 10; i++) {
      loops.forEach((l) => l.wake());
      await new Promise((r) => setTimeout(r, 50));
    }
    const events = await t.pool.query("SELECT count(*)::int AS n FROM alert_events");
    expect(events.rows[0].n).toBe(1);
    expect(receiver.received.map((r) => (r.body as { kind: string }).kind)).toEqual(["firing"]);

    await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T10:05:00Z"), state: "done", finishedAt: new Date("2030-01-01T10:06:00Z") });
    await eventually(() => receiver.received.length >= 2);
    for (let i = 0; i < 10; i++) {
      loops.forEach((l) => l.wake());
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(receiver.received.map((r) => (r.body as { kind: string; rule: string }).kind)).toEqual(["firing", "resolved"]);
    const all = await t.pool.query("SELECT kind FROM alert_events ORDER BY id");
    expect(all.rows.map((r) => r.kind)).toEqual(["firing", "resolved"]);
  });
});
