import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliverOnce } from "@/lib/alerts/deliveries";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { sendToChannel } from "@/lib/alerts/send";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";
import { startReceiver } from "@/lib/testing/receiver";

// The receivers below listen on loopback, which the outbound address policy refuses unless opened.
process.env.SLOTKEEPER_OUTBOUND_ALLOW = "127.0.0.1,::1,localhost";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, reset: false, routes: true });
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let api: { channels: Record<string, Handler>; channel: Record<string, Handler>; test: Record<string, Handler>; events: Record<string, Handler>; firing: Record<string, Handler> };

beforeAll(async () => {
  receiver = await startReceiver((r) => (r.path === "/down" ? 500 : 200));
  process.env.SLOTKEEPER_PUBLIC_URL = "http://console.test";
  api = {
    channels: await import("./channels/route"),
    channel: await import("./channels/[id]/route"),
    test: await import("./channels/[id]/test/route"),
    events: await import("./events/route"),
    firing: await import("./route"),
  } as unknown as typeof api;
});
afterAll(async () => {
  await receiver?.close();
});

const ctx = (params: Record<string, string> = {}) => ({ params: Promise.resolve(params) });
const json = (method: string, body?: unknown) =>
  new Request("http://localhost/api/alerts/channels", {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe("channels API", () => {
  it("creates, lists, edits, test-sends and deletes channels", async () => {
    const created = await api.channels.POST(json("POST", { name: "ops-hook", kind: "webhook", config: { url: `${receiver.url}/hook` } }), ctx());
    expect(created.status).toBe(201);
    const { channel } = await created.json();
    expect(channel).toMatchObject({ name: "ops-hook", kind: "webhook", enabled: true });

    const dup = await api.channels.POST(json("POST", { name: "ops-hook", kind: "slack", config: { url: `${receiver.url}/x` } }), ctx());
    expect(dup.status).toBe(409);
    const bad = await api.channels.POST(json("POST", { name: "mail", kind: "email", config: { to: ["not-an-address"] } }), ctx());
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.field).toBe("config.to.0");

    const list = await (await api.channels.GET(new Request("http://localhost/api/alerts/channels"), ctx())).json();
    expect(list.channels.map((c: { name: string }) => c.name)).toEqual(["ops-hook"]);
    expect(list.smtpConfigured).toBe(false);

    // "Send test": the sample arrives at once, and its body names a schedule, rule, numbers and a link.
    const sent = await (await api.test.POST(json("POST"), ctx({ id: String(channel.id) }))).json();
    expect(sent).toEqual({ ok: true });
    expect(receiver.received.at(-1)?.body).toMatchObject({ kind: "test", rule: "late", schedule: { name: "example-schedule", url: "http://console.test/alerts" }, numbers: { sinceLastSuccessSeconds: 631 } });

    // Edit it into a Slack-compatible channel pointing at a failing URL: the test reports why.
    const edited = await api.channel.PATCH(json("PATCH", { name: "ops-slack", kind: "slack", config: { url: `${receiver.url}/down` } }), ctx({ id: String(channel.id) }));
    expect(edited.status).toBe(200);
    const failed = await (await api.test.POST(json("POST"), ctx({ id: String(channel.id) }))).json();
    expect(failed).toEqual({ ok: false, error: `POST ${receiver.url}/down answered 500: receiver says no` });
    expect(Object.keys(receiver.received.at(-1)?.body as object)).toEqual(["text"]);

    // Each test send is audited with what the receiver answered.
    const audit = await t.pool.query("SELECT action, after FROM audit_log WHERE target_type = 'channel' ORDER BY id");
    expect(audit.rows.map((r) => [r.action, r.after?.ok ?? null])).toEqual([["channel.create", null], ["channel.test", true], ["channel.update", null], ["channel.test", false]]);

    expect((await api.channel.DELETE(json("DELETE"), ctx({ id: String(channel.id) }))).status).toBe(204);
    expect((await api.channel.DELETE(json("DELETE"), ctx({ id: String(channel.id) }))).status).toBe(404);
    expect((await api.channel.GET(json("GET"), ctx({ id: "abc" }))).status).toBe(400);
  });
});

describe("alert history API", () => {
  it("lists events newest first with their deliveries, filtered and paginated, and what fires now", async () => {
    await t.pool.query("INSERT INTO alert_channels (name, kind, config) VALUES ('up', 'webhook', $1), ('down', 'webhook', $2)", [
      JSON.stringify({ url: `${receiver.url}/ok` }),
      JSON.stringify({ url: `${receiver.url}/down` }),
    ]);
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const a = (await makeSchedule(t.db, { name: "alpha", everySeconds: 300 })).id;
    const b = (await makeSchedule(t.db, { name: "beta", everySeconds: 300 })).id;
    await makeRun(t.db, { scheduleId: a, scheduledFor: new Date("2030-01-01T09:05:00Z"), state: "dead", finishedAt: new Date("2030-01-01T09:05:10Z"), attempts: 6 });
    await makeRun(t.db, { scheduleId: b, scheduledFor: new Date("2030-01-01T09:05:00Z"), state: "done", finishedAt: new Date("2030-01-01T09:05:10Z") });
    await setClock(t.pool, "2030-01-01T09:06:00Z");
    await evaluateAlerts(t.db, { publicUrl: "http://console.test", reminderSeconds: 3600 }); // alpha failing
    await setClock(t.pool, "2030-01-01T09:20:00Z");
    await evaluateAlerts(t.db, { publicUrl: "http://console.test", reminderSeconds: 3600 }); // alpha and beta late
    await deliverOnce(t.db, { limit: 50, send: sendToChannel, ctx: { smtp: null, timeoutMs: 2000 } });

    const get = async (q: string) => (await api.events.GET(new Request(`http://localhost/api/alerts/events${q}`), ctx())).json();
    const all = await get("");
    expect(all.events.map((e: { scheduleName: string; rule: string; kind: string }) => `${e.scheduleName}:${e.rule}:${e.kind}`).slice(-1)).toEqual(["alpha:failing:firing"]);
    expect(all.events).toHaveLength(3);
    const first = all.events.at(-1);
    expect(first.deliveries.map((d: { channelName: string; state: string; lastError: string | null }) => [d.channelName, d.state, d.lastError])).toEqual([
      ["down", "pending", `POST ${receiver.url}/down answered 500: receiver says no`],
      ["up", "delivered", null],
    ]);
    expect((await get("?schedule=beta")).events.map((e: { rule: string }) => e.rule)).toEqual(["late"]);
    expect((await get("?rule=failing")).events).toHaveLength(1);
    const page1 = await get("?limit=2");
    expect(page1.events).toHaveLength(2);
    const page2 = await get(`?limit=2&before=${page1.nextBefore}`);
    expect(page2.events.map((e: { id: number }) => e.id)).toEqual([first.id]);
    expect(page2.nextBefore).toBeNull();
    expect((await api.events.GET(new Request("http://localhost/api/alerts/events?rule=sad"), ctx())).status).toBe(400);

    const firing = await (await api.firing.GET(new Request("http://localhost/api/alerts"), ctx())).json();
    expect(firing.firing.map((f: { scheduleName: string; rule: string }) => `${f.scheduleName}:${f.rule}`)).toEqual(["alpha:failing", "alpha:late", "beta:late"]);
  });
});
