// The manual's screenshots (docs/images/*.png), taken from a real stack so they show the console
// as it is. A stack of its own (a fresh database, the console, two workers), so the pictures hold
// only the schedules seeded here and the other specs keep their one-worker stack. Seeds a handful
// of realistic schedules through the API, waits for real runs — a worker killed mid-run and its
// run taken over by another, a failing export that goes dead, an alert delivered to a webhook —
// then photographs each main page at one fixed viewport.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ChildProcess } from "node:child_process";
import { expect, test } from "@playwright/test";
import { startStack, type Stack } from "./stack";

test.describe.configure({ mode: "serial" });
test.use({ viewport: { width: 1280, height: 900 }, colorScheme: "light", timezoneId: "UTC", locale: "en-GB" });

const IMAGES = "docs/images";
let stack: Stack;
let hook: http.Server;
let hookUrl = "";
const workers: ChildProcess[] = [];
/** The run whose first worker was killed: its page shows the take-over. */
let takeover = 0;

type Run = { id: number; state: string; attempts: number; leaseOwner: string | null };
type Worker = { id: string; pid: number; status: string };

async function api<T>(method: "GET" | "POST" | "PATCH", url: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.baseURL}${url}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.ok, `${method} ${url} → ${res.status} ${text}`).toBeTruthy();
  return JSON.parse(text) as T;
}

const SCHEDULES = [
  { name: "sync-invoices", description: "Pulls new invoices from the billing system.", handler: "sleep", payload: { ms: 6000 }, everySeconds: 10, leaseSeconds: 4 },
  { name: "heartbeat-ping", description: "Proves the scheduler is alive.", handler: "noop", payload: {}, everySeconds: 2 },
  { name: "ledger-rollup", description: "Rolls the day's ledger up, one row per slot.", handler: "sql-ledger", payload: {}, cron: "*/5 * * * * *", timezone: "Europe/London" },
  { name: "nightly-report", description: "Builds and mails the nightly sales report.", handler: "noop", payload: {}, cron: "0 2 * * *", timezone: "Europe/London", catchUp: "latest", maxLatenessSeconds: 3600, jitterSeconds: 300 },
  {
    name: "export-to-warehouse",
    description: "Uploads yesterday's orders to the warehouse.",
    handler: "fail",
    payload: { message: "warehouse answered 403 Forbidden: credentials expired" },
    cron: "30 4 * * *",
    retry: { maxAttempts: 3, baseSeconds: 1, capSeconds: 2 },
  },
  { name: "quarterly-cleanup", description: "Archives closed accounts.", handler: "noop", payload: {}, cron: "0 3 1 */3 *", enabled: false },
];

test.beforeAll(async () => {
  test.setTimeout(180_000);
  hook = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/slotkeeper`;
  stack = await startStack({ env: { SLOTKEEPER_ALERT_INTERVAL_SECONDS: "2", SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1,::1,localhost" } });
  workers.push(stack.startWorker()); // a second worker beside the one the stack starts
  await expect.poll(async () => (await api<{ workers: Worker[] }>("GET", "/api/workers")).workers.filter((w) => w.status === "alive").length, { timeout: 30_000 }).toBe(2);
  await api("POST", "/api/alerts/channels", { name: "ops-webhook", kind: "webhook", config: { url: hookUrl }, enabled: true });
  for (const s of SCHEDULES) await api("POST", "/api/schedules", s);
});

test.afterAll(async () => {
  await stack?.stop();
  await new Promise((r) => hook?.close(r));
});

test("a run taken over by another worker, a dead run, an alert delivered", async () => {
  test.setTimeout(120_000);
  // A run of sync-invoices that its worker dies in the middle of: kill -9 the holder.
  const { run } = await api<{ run: Run }>("POST", "/api/schedules/sync-invoices/run-now");
  let holder = "";
  await expect.poll(async () => ((holder = (await api<{ run: Run }>("GET", `/api/runs/${run.id}`)).run.leaseOwner ?? "")), { timeout: 30_000 }).not.toBe("");
  const { workers: listed } = await api<{ workers: Worker[] }>("GET", "/api/workers");
  const pid = listed.find((w) => w.id === holder)!.pid;
  process.kill(pid, "SIGKILL");
  workers.push(stack.startWorker()); // its replacement, as a service manager would start one
  await expect.poll(async () => (await api<{ run: Run }>("GET", `/api/runs/${run.id}`)).run, { timeout: 40_000 }).toMatchObject({ state: "done", attempts: 2 });
  takeover = run.id;

  // export-to-warehouse fails three times and is dead; the failing rule fires and is delivered.
  const dead = (await api<{ run: Run }>("POST", "/api/schedules/export-to-warehouse/run-now")).run;
  await expect.poll(async () => (await api<{ run: Run }>("GET", `/api/runs/${dead.id}`)).run.state, { timeout: 40_000 }).toBe("dead");
  await expect
    .poll(async () => (await api<{ events: { deliveries: { state: string }[] }[] }>("GET", "/api/alerts/events")).events.some((e) => e.deliveries.some((d) => d.state === "delivered")), { timeout: 40_000 })
    .toBe(true);
});

test("photograph the main pages", async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(`${stack.baseURL}/`);
  await expect(page.getByTestId("overview-schedule-row")).toHaveCount(SCHEDULES.length);
  await expect(page.getByTestId("health-charts")).toBeVisible();
  await page.waitForLoadState("networkidle");
  await page.screenshot({ path: `${IMAGES}/overview.png` });

  await page.goto(`${stack.baseURL}/schedules`);
  await expect(page.getByTestId("schedule-row")).toHaveCount(SCHEDULES.length);
  await page.screenshot({ path: `${IMAGES}/schedules.png` });

  await page.goto(`${stack.baseURL}/schedules/sync-invoices`);
  await expect(page.getByTestId("run-row").filter({ hasText: "done" }).first()).toBeVisible();
  await page.waitForLoadState("networkidle");
  // Health, charts, run history and configuration; the audit trail below them is left out.
  await page.screenshot({ path: `${IMAGES}/schedule.png`, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: 1560 } });

  await page.goto(`${stack.baseURL}/runs/${takeover}`);
  await expect(page.getByTestId("attempt")).toHaveCount(2);
  await page.screenshot({ path: `${IMAGES}/run.png` });

  await page.goto(`${stack.baseURL}/workers`);
  await expect(page.getByTestId("worker-row")).toHaveCount(3);
  await page.screenshot({ path: `${IMAGES}/workers.png` });

  await page.goto(`${stack.baseURL}/alerts`);
  await expect(page.getByTestId("alert-firing").first()).toBeVisible();
  await expect(page.getByTestId("alert-delivery").first()).toBeVisible();
  await expect(page.getByTestId("channel-row")).toHaveCount(1);
  await page.screenshot({ path: `${IMAGES}/alerts.png`, fullPage: true });
});
