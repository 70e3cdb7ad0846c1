// The opening scenario of issue 25, with real processes and sockets: an `http` schedule pointed at
// the console's own API (`/api/schedules/<other>/pause`) must neither reach it on a default
// install (loopback-only, no SLOTKEEPER_OUTBOUND_ALLOW) nor act as the local operator when
// loopback is opened on purpose. "Nothing changed" is read from the database: the other schedule
// stays enabled and the audit log has no entry for it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { expect, stackInfo, test } from "./fixtures";
import { startStack, type Stack } from "./stack";

test.describe.configure({ mode: "serial" });

const suffix = Date.now().toString(36);
let defaultInstall: Stack | undefined;
let db: pg.Pool | undefined;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  // A default install: nothing opened, no passwords (the global stack opens loopback for its receivers).
  defaultInstall = await startStack({ env: { SLOTKEEPER_OUTBOUND_ALLOW: "" } });
  db = new pg.Pool({ connectionString: defaultInstall.databaseUrl, max: 2 });
});

test.afterAll(async () => {
  await db?.end();
  await defaultInstall?.stop();
});

type RunRow = { state: string; last_error: string | null; attempts: number };

async function waitForFinishedRun(pool: pg.Pool, schedule: string): Promise<RunRow> {
  let row: RunRow | undefined;
  await expect(async () => {
    const r = await pool.query<RunRow>(
      `SELECT r.state::text AS state, r.last_error, r.attempts FROM run_status r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = $1 AND r.state IN ('dead', 'done') ORDER BY r.id DESC LIMIT 1`,
      [schedule],
    );
    row = r.rows[0];
    expect(row).toBeTruthy();
  }).toPass({ timeout: 60_000 });
  return row!;
}

async function untouched(pool: pg.Pool, victim: string) {
  const s = await pool.query<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE name = $1", [victim]);
  expect(s.rows[0].enabled).toBe(true);
  const audit = await pool.query("SELECT 1 FROM audit_log a JOIN schedules s ON s.id = a.schedule_id WHERE s.name = $1 AND a.action <> 'schedule.create'", [victim]);
  expect(audit.rowCount).toBe(0);
}

test("default install: a schedule pointed at the console's own API fails naming the policy, and changes nothing", async ({ request }) => {
  const base = defaultInstall!.baseURL;
  const port = new URL(base).port;
  const victim = `victim-${suffix}`;
  expect((await request.post(`${base}/api/schedules`, { data: { name: victim, handler: "noop", everySeconds: 3600 } })).status()).toBe(201);

  // A receiver on 127.0.0.1 that must see nothing, whichever spelling of loopback a schedule uses.
  const seen: string[] = [];
  const receiver = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    res.end("ok");
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const rport = (receiver.address() as AddressInfo).port;
  const targets = {
    [`self-${suffix}`]: `http://127.0.0.1:${port}/api/schedules/${victim}/pause`,
    [`self-mapped-${suffix}`]: `http://[::ffff:127.0.0.1]:${port}/api/schedules/${victim}/pause`,
    [`self-localhost-${suffix}`]: `http://localhost:${port}/api/schedules/${victim}/pause`,
    [`receiver-${suffix}`]: `http://127.0.0.1:${rport}/hook`,
  };
  try {
    for (const [name, url] of Object.entries(targets)) {
      const saved = await request.post(`${base}/api/schedules`, { data: { name, handler: "http", payload: { url, method: "POST" }, everySeconds: 86_400, retry: { maxAttempts: 3, baseSeconds: 1, capSeconds: 1 } } });
      expect(saved.status()).toBe(201);
      // Saved, with a warning beside the field: the worker's network may differ from the console's.
      const body = (await saved.json()) as { warnings: { field: string; message: string }[] };
      expect(body.warnings).toEqual([expect.objectContaining({ field: "payload.url", message: expect.stringContaining("SLOTKEEPER_OUTBOUND_ALLOW") })]);
      expect((await request.post(`${base}/api/schedules/${name}/run-now`, { data: {} })).ok()).toBeTruthy();
    }
    for (const name of Object.keys(targets)) {
      const run = await waitForFinishedRun(db!, name);
      // Non-retryable: dead on the first attempt, with the policy and the variable named.
      expect(run.state).toBe("dead");
      expect(run.last_error).toContain("outbound address policy");
      expect(run.last_error).toContain("SLOTKEEPER_OUTBOUND_ALLOW");
      expect(run.attempts).toBe(1);
    }
    expect(seen).toEqual([]);
    await untouched(db!, victim);
  } finally {
    await new Promise<void>((r) => receiver.close(() => r()));
  }
});

test("default install: a channel's Send test says why the policy refused it", async ({ page, request }) => {
  const base = defaultInstall!.baseURL;
  const made = await request.post(`${base}/api/alerts/channels`, { data: { name: `self-hook-${suffix}`, kind: "webhook", config: { url: `${base}/api/schedules` } } });
  expect(made.status()).toBe(201);
  const { channel } = (await made.json()) as { channel: { id: number } };
  const tested = (await (await request.post(`${base}/api/alerts/channels/${channel.id}/test`, { data: {} })).json()) as { ok: boolean; error: string };
  expect(tested.ok).toBe(false);
  expect(tested.error).toMatch(/outbound address policy: 127\.0\.0\.1 is a loopback address.*SLOTKEEPER_OUTBOUND_ALLOW/);
  await page.goto(`${base}/alerts`);
  const row = page.getByTestId("channel-row").filter({ hasText: `self-hook-${suffix}` });
  await row.getByTestId("channel-test").click();
  await expect(page.getByTestId("channel-test-result")).toContainText("outbound address policy");
  await expect(page.getByTestId("channel-test-result")).toContainText("SLOTKEEPER_OUTBOUND_ALLOW");
});

test("with loopback opened on purpose (SLOTKEEPER_OUTBOUND_ALLOW=127.0.0.1…), the call arrives but is never the local operator", async ({ request, sql }) => {
  // The global stack's workers run with SLOTKEEPER_OUTBOUND_ALLOW=127.0.0.1,::1,localhost.
  const base = stackInfo().baseURL;
  const victim = `victim-allowed-${suffix}`;
  const self = `self-allowed-${suffix}`;
  expect((await request.post(`${base}/api/schedules`, { data: { name: victim, handler: "noop", everySeconds: 3600 } })).status()).toBe(201);
  const url = `${base}/api/schedules/${victim}/pause`;
  // The payload even tries to drop the marker and forge the peer: neither works.
  const headers = { "slotkeeper-outbound": "", "x-slotkeeper-peer": "127.0.0.1", "content-type": "application/json" };
  expect((await request.post(`${base}/api/schedules`, { data: { name: self, handler: "http", payload: { url, method: "POST", headers, body: {} }, everySeconds: 86_400 } })).status()).toBe(201);
  expect((await request.post(`${base}/api/schedules/${self}/run-now`, { data: {} })).ok()).toBeTruthy();
  const run = await waitForFinishedRun(sql, self);
  expect(run.state).toBe("dead");
  expect(run.last_error).toContain("403");
  expect(run.last_error).toContain("never act as the local operator");
  await untouched(sql, victim);
});
