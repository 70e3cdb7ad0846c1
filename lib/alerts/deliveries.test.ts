import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { advanceClock, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { startReceiver } from "../testing/receiver";
import { claimDeliveries, deliverOnce, DELIVERY_LEASE_SECONDS, DELIVERY_RETRY, finishDelivery } from "./deliveries";
import { evaluateAlerts } from "./evaluate";
import { sampleMessage } from "./message";
import { sendToChannel, type SendContext } from "./send";
import { parseSmtpUrl } from "./smtp";

// The receivers below listen on loopback, which the outbound address policy refuses unless opened.
process.env.SLOTKEEPER_OUTBOUND_ALLOW = "127.0.0.1,::1,localhost";

const t = setupTestDatabase({ poolSize: 4 });
let ok: Awaited<ReturnType<typeof startReceiver>>;
let broken: Awaited<ReturnType<typeof startReceiver>>;
const ctx: SendContext = { smtp: null, timeoutMs: 2_000 };

beforeAll(async () => {
  ok = await startReceiver();
  broken = await startReceiver(() => 503);
});
afterAll(async () => {
  await ok?.close();
  await broken?.close();
});
beforeEach(async () => {
  ok.received.length = 0;
  broken.received.length = 0;
});

async function addChannel(name: string, kind: string, config: unknown) {
  await t.pool.query("INSERT INTO alert_channels (name, kind, config) VALUES ($1, $2, $3)", [name, kind, JSON.stringify(config)]);
}

/** A schedule that stopped succeeding at 10:00 and is late at 10:10:31: one firing event. */
async function fireOneAlert() {
  await setClock(t.pool, "2030-01-01T09:00:00Z");
  const id = (await makeSchedule(t.db, { name: "nightly-report", everySeconds: 300 })).id;
  await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T10:00:00Z"), state: "done", finishedAt: new Date("2030-01-01T10:00:00Z") });
  await setClock(t.pool, "2030-01-01T10:10:31Z");
  const r = await evaluateAlerts(t.db, { publicUrl: "http://console.test/", reminderSeconds: 3600 });
  expect(r.firing).toBe(1);
  return id;
}

async function deliveries() {
  const { rows } = await t.pool.query("SELECT c.name, d.state, d.attempts, d.last_error, d.delivered_at, d.next_attempt_at FROM alert_deliveries d JOIN alert_channels c ON c.id = d.channel_id ORDER BY c.name");
  return rows;
}

describe("deliveries", () => {
  it("posts the JSON body to a webhook and { text } to a Slack-compatible one", async () => {
    await addChannel("hook", "webhook", { url: `${ok.url}/hook` });
    await addChannel("slack", "slack", { url: `${ok.url}/slack` });
    const id = await fireOneAlert();

    const r = await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx });
    expect(r).toEqual({ claimed: 2, delivered: 2, retrying: 0, failed: 0 });

    const hook = ok.received.find((x) => x.path === "/hook")!;
    expect(hook.headers["content-type"]).toBe("application/json");
    expect(hook.body).toMatchObject({
      kind: "firing",
      rule: "late",
      schedule: { id, name: "nightly-report", url: "http://console.test/schedules/nightly-report" },
      at: "2030-01-01T10:10:31.000Z",
      status: "late",
      numbers: { sinceLastSuccessSeconds: 631, deadRuns: 0, oldestPendingAgeSeconds: null },
      thresholds: { lateAfterSeconds: 630, backlogAfterSeconds: 300 },
      firingSince: "2030-01-01T10:10:31+00:00",
    });
    const slack = ok.received.find((x) => x.path === "/slack")!;
    expect(Object.keys(slack.body as object)).toEqual(["text"]);
    expect((slack.body as { text: string }).text).toBe(
      [
        "[FIRING] nightly-report is late",
        "no success for 10m 31s (late after 10m 30s)",
        "since last success 10m 31s · dead runs 0 · oldest pending —",
        "http://console.test/schedules/nightly-report",
      ].join("\n"),
    );
    expect((await deliveries()).map((d) => [d.name, d.state, d.attempts])).toEqual([
      ["hook", "delivered", 1],
      ["slack", "delivered", 1],
    ]);
    // Delivered rows are never claimed again.
    expect((await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx })).claimed).toBe(0);
  });

  it("retries a failing channel with backoff, then marks it failed with the error, without holding up the others", async () => {
    await addChannel("a-broken", "webhook", { url: `${broken.url}/x` });
    await addChannel("b-ok", "webhook", { url: `${ok.url}/y` });
    await fireOneAlert();

    const first = await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx });
    expect(first).toEqual({ claimed: 2, delivered: 1, retrying: 1, failed: 0 });
    let [b] = await deliveries();
    expect(b).toMatchObject({ state: "pending", attempts: 1, last_error: `POST ${broken.url}/x answered 503: receiver says no` });
    // Backoff: the next attempt waits up to the first ceiling (15 s), measured on the database clock.
    const wait = (b.next_attempt_at.getTime() - Date.parse("2030-01-01T10:10:31Z")) / 1000;
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThanOrEqual(DELIVERY_RETRY.baseSeconds);

    for (let attempt = 2; attempt <= DELIVERY_RETRY.maxAttempts; attempt++) {
      await advanceClock(t.pool, DELIVERY_RETRY.capSeconds * 1000);
      const r = await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx });
      expect(r.claimed).toBe(1);
    }
    [b] = await deliveries();
    expect(b).toMatchObject({ state: "failed", attempts: DELIVERY_RETRY.maxAttempts });
    expect(b.last_error).toContain("answered 503");
    expect(broken.received.length).toBe(DELIVERY_RETRY.maxAttempts);
    expect(ok.received.length).toBe(1);
    await advanceClock(t.pool, 3_600_000);
    expect((await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx })).claimed).toBe(0);
  });

  it("gives up on a receiver that never answers after the timeout, and delivers the rest in the same pass", async () => {
    const silent = net.createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as AddressInfo).port;
    try {
      await addChannel("hangs", "webhook", { url: `http://127.0.0.1:${port}/` });
      await addChannel("works", "slack", { url: `${ok.url}/z` });
      await fireOneAlert();
      // A pass that waited on the silent receiver would hang here until the test's own timeout.
      const r = await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx: { smtp: null, timeoutMs: 300 } });
      expect(r).toEqual({ claimed: 2, delivered: 1, retrying: 1, failed: 0 });
      const [hangs] = await deliveries();
      expect(hangs.last_error).toContain("timed out after 300 ms");
    } finally {
      silent.close();
    }
  });

  it("a sender that lost its lease writes nothing (fenced on attempts)", async () => {
    await addChannel("hook", "webhook", { url: `${ok.url}/hook` });
    await fireOneAlert();
    // Worker A claims and stalls past the lease; worker B re-claims and delivers; A's late write is ignored.
    const [a] = await claimDeliveries(t.db, 10);
    expect(await claimDeliveries(t.db, 10)).toEqual([]); // held while A's lease lasts
    await advanceClock(t.pool, (DELIVERY_LEASE_SECONDS + 1) * 1000);
    const r = await deliverOnce(t.db, { limit: 10, send: sendToChannel, ctx });
    expect(r.delivered).toBe(1);
    expect(await finishDelivery(t.db, a, { ok: false, error: "late write from A", retry: false })).toBe(false);
    expect((await deliveries())[0]).toMatchObject({ state: "delivered", attempts: 2, last_error: null });
  });
});

describe("e-mail over SMTP", () => {
  it("speaks EHLO, AUTH PLAIN, MAIL FROM, RCPT TO and DATA to a local server", async () => {
    const seen: string[] = [];
    const server = net.createServer((socket) => {
      socket.setEncoding("utf8");
      let inData = false;
      let buf = "";
      socket.write("220 test ESMTP\r\n");
      socket.on("data", (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf("\r\n")) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 2);
          seen.push(line);
          if (inData) {
            if (line === ".") {
              inData = false;
              socket.write("250 queued\r\n");
            }
          } else if (line.startsWith("EHLO")) socket.write("250-test\r\n250-AUTH LOGIN PLAIN\r\n250 8BITMIME\r\n");
          else if (line.startsWith("AUTH PLAIN")) socket.write("235 ok\r\n");
          else if (line.startsWith("MAIL FROM") || line.startsWith("RCPT TO")) socket.write("250 ok\r\n");
          else if (line === "DATA") {
            inData = true;
            socket.write("354 go\r\n");
          } else if (line === "QUIT") socket.end("221 bye\r\n");
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    try {
      const smtp = parseSmtpUrl(`smtp://alerts:s3cret@127.0.0.1:${port}`, "Slotkeeper <alerts@example.test>");
      await sendToChannel({ kind: "email", config: { to: ["ops@example.test"] } }, sampleMessage("http://console.test", new Date()), { smtp, timeoutMs: 2_000 });
      expect(seen).toContain(`AUTH PLAIN ${Buffer.from("\0alerts\0s3cret").toString("base64")}`);
      expect(seen).toContain("MAIL FROM:<alerts@example.test>");
      expect(seen).toContain("RCPT TO:<ops@example.test>");
      expect(seen).toContain("Subject: [TEST] Slotkeeper test notification");
      expect(seen).toContain("http://console.test/alerts");
      expect(seen.at(-1)).toBe("QUIT");
    } finally {
      server.close();
    }
  });

  it("fails with a clear reason when SMTP is not configured", async () => {
    await expect(sendToChannel({ kind: "email", config: { to: ["a@b.test"] } }, sampleMessage("http://x", new Date()), { smtp: null, timeoutMs: 100 })).rejects.toThrow(
      /SLOTKEEPER_SMTP_URL/,
    );
  });
});
