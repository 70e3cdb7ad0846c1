// The console at fleet scale, in a real browser: a stack of its own (a fresh database, the console,
// no worker, the database clock stopped) holding 50,000 schedules seeded with generate_series
// (lib/testing/fleet.ts). Search, filter, sort and page forward and back on Schedules, a copied
// URL opening the same page, and the Overview's summary, each checked against SQL on the seeded
// rows. Prints how long each page took to show.
import { expect, test, type Page } from "@playwright/test";
import pg from "pg";
import { evaluateAlerts } from "../lib/alerts/evaluate";
import { createDb } from "../lib/db/client";
import { setClock } from "../lib/testing/clock";
import { seedFleet } from "../lib/testing/fleet";
import { startStack, type Stack } from "./stack";

test.describe.configure({ mode: "serial" });

const FLEET = 50_000;
let stack: Stack;
let pool: pg.Pool;
const timings: string[] = [];

test.beforeAll(async () => {
  test.setTimeout(240_000);
  stack = await startStack({ workers: 0 });
  pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  await setClock(pool, "2030-01-01T10:00:00Z");
  await seedFleet(pool, FLEET);
});

test.afterAll(async () => {
  console.log(`fleet of ${FLEET}: ${timings.join("; ")}`);
  await pool?.end();
  await stack?.stop();
});

async function names(sqlText: string, params: unknown[] = []): Promise<string[]> {
  return (await pool.query<{ name: string }>(sqlText, params)).rows.map((r) => r.name);
}

const rowNames = (page: Page) => page.getByTestId("schedule-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-name") ?? ""));

/** Wait until the table shows exactly `expected`, and record how long that took since `started`. */
async function expectRows(page: Page, expected: string[], label: string, started: number) {
  await expect.poll(() => rowNames(page), { timeout: 20_000 }).toEqual(expected);
  timings.push(`${label} ${Date.now() - started} ms`);
}

const LIVE = "FROM schedules WHERE deleted_at IS NULL";

test("page forward and back through every schedule by name; a copied URL opens the same page", async ({ page }) => {
  let started = Date.now();
  await page.goto(`${stack.baseURL}/schedules`);
  await expectRows(page, await names(`SELECT name ${LIVE} ORDER BY name, id LIMIT 50`), "first page", started);
  for (const offset of [50, 100]) {
    started = Date.now();
    await page.getByRole("button", { name: "Next page" }).click();
    await expectRows(page, await names(`SELECT name ${LIVE} ORDER BY name, id OFFSET $1 LIMIT 50`, [offset]), `next page (${offset / 50 + 1})`, started);
  }
  await expect(page.getByTestId("schedules-page-number")).toHaveText("Page 3");
  started = Date.now();
  await page.getByRole("button", { name: "Previous page" }).click();
  await expectRows(page, await names(`SELECT name ${LIVE} ORDER BY name, id OFFSET 50 LIMIT 50`), "previous page", started);
  await expect(page.getByTestId("schedules-page-number")).toHaveText("Page 2");

  // The URL holds the page: opened afresh it shows the same rows, and Previous still goes back.
  const url = page.url();
  expect(url).toContain("cursor=");
  const other = await page.context().newPage();
  await other.goto(url);
  await expectRows(other, await names(`SELECT name ${LIVE} ORDER BY name, id OFFSET 50 LIMIT 50`), "shared URL", Date.now());
  await other.getByRole("button", { name: "Previous page" }).click();
  await expectRows(other, await names(`SELECT name ${LIVE} ORDER BY name, id LIMIT 50`), "previous from shared URL", Date.now());
  await expect(other.getByRole("button", { name: "Previous page" })).toBeDisabled();
  await other.close();
});

test("search and a handler filter reach the whole fleet, page by page", async ({ page }) => {
  await page.goto(`${stack.baseURL}/schedules`);
  await expect(page.getByTestId("schedule-row").first()).toBeVisible();
  // One schedule in a thousand says "needle": exactly 50 here, far past the first 500 by name.
  let started = Date.now();
  await page.getByLabel("Search", { exact: true }).fill("NEEDLE");
  const needles = await names(`SELECT name ${LIVE} AND (name ILIKE '%needle%' OR handler ILIKE '%needle%' OR description ILIKE '%needle%') ORDER BY name, id`);
  expect(needles.length).toBe(50);
  expect(needles.at(-1)).toBe("fleet-0049007");
  await expectRows(page, needles, "search", started);
  await expect(page.getByRole("button", { name: "Next page" })).toBeDisabled();
  await expect(page).toHaveURL(/search=NEEDLE/);

  started = Date.now();
  await page.getByLabel("Search", { exact: true }).fill("nightly");
  await page.getByLabel("Handler", { exact: true }).fill("h3");
  const nightly = await names(`SELECT name ${LIVE} AND (name ILIKE '%nightly%' OR handler ILIKE '%nightly%' OR description ILIKE '%nightly%') AND handler = 'h3' ORDER BY name, id`);
  expect(nightly.length).toBeGreaterThan(1000);
  await expectRows(page, nightly.slice(0, 50), "search + handler", started);
  started = Date.now();
  await page.getByRole("button", { name: "Next page" }).click();
  await expectRows(page, nightly.slice(50, 100), "search + handler, next page", started);
  await expect(page).toHaveURL(/handler=h3/);
});

test("a status filter with the next-slot sort, then the status shown on every row", async ({ page }) => {
  await page.goto(`${stack.baseURL}/schedules`);
  await expect(page.getByTestId("schedule-row").first()).toBeVisible();
  const dead = "EXISTS (SELECT 1 FROM run_queue d WHERE d.schedule_id = schedules.id AND d.state = 'dead')";
  let started = Date.now();
  await page.getByLabel("Status", { exact: true }).selectOption("failing");
  const failing = await names(`SELECT name ${LIVE} AND enabled AND ${dead} ORDER BY name, id`);
  expect(failing.length).toBeGreaterThan(400);
  await expectRows(page, failing.slice(0, 50), "status failing", started);
  started = Date.now();
  await page.getByLabel("Sort by").selectOption("nextDue");
  const byNext = await names(`SELECT name ${LIVE} AND enabled AND ${dead} ORDER BY next_slot_at, id`);
  await expectRows(page, byNext.slice(0, 50), "status failing by next slot", started);
  await page.getByRole("button", { name: "Next page" }).click();
  await expectRows(page, byNext.slice(50, 100), "status failing by next slot, next page", Date.now());
  await expect(page.getByTestId("status-badge")).toHaveText(Array(50).fill("failing"));
  await expect(page).toHaveURL(/status=failing/);
  await expect(page).toHaveURL(/sort=nextDue/);

  started = Date.now();
  await page.getByLabel("Status", { exact: true }).selectOption("paused");
  await page.getByLabel("Managed by").selectOption("true");
  const paused = await names(`SELECT name ${LIVE} AND NOT enabled AND managed_by IS NOT NULL ORDER BY next_slot_at, id`);
  await expectRows(page, paused.slice(0, 50), "paused + managed by next slot", started);
  await expect(page.getByTestId("schedules-page-number")).toHaveText("Page 1");
});

test("two filters chosen before the first has loaded both apply", async ({ page }) => {
  await page.goto(`${stack.baseURL}/schedules`);
  await expect(page.getByTestId("schedule-row").first()).toBeVisible();
  // Each filter change is a navigation the router commits once the server's answer is in (an RSC
  // request): held back a while, the second choice comes before the first has landed in the URL.
  await page.route(/\/schedules\?.*_rsc=/, async (route) => {
    await new Promise((r) => setTimeout(r, 1500));
    await route.continue().catch(() => {});
  });
  const started = Date.now();
  await page.getByLabel("Status", { exact: true }).selectOption("paused");
  await page.getByLabel("Managed by").selectOption("true");
  const paused = await names(`SELECT name ${LIVE} AND NOT enabled AND managed_by IS NOT NULL ORDER BY name, id`);
  await expect(page).toHaveURL(/status=paused/);
  await expect(page).toHaveURL(/managed=true/);
  await expectRows(page, paused.slice(0, 50), "two quick filters", started);
  await page.unroute(/\/schedules\?.*_rsc=/);
});

test("the Overview summarises the fleet: counts by status and the worst schedules", async ({ page }) => {
  test.setTimeout(120_000);
  // The counts by status are the alert pass's. No worker runs here: before a pass every schedule
  // is counted as not evaluated; then one pass, as a worker's alert loop runs it, judges them all.
  await page.goto(`${stack.baseURL}/`);
  await expect(page.getByTestId("status-not-evaluated")).toContainText(`${FLEET} schedules not evaluated yet`, { timeout: 20_000 });
  await expect(page.getByTestId("status-count-failing")).toHaveText("0");
  expect((await evaluateAlerts(createDb(pool), { publicUrl: stack.baseURL, reminderSeconds: 0 })).checked).toBe(FLEET);
  const started = Date.now();
  await page.goto(`${stack.baseURL}/`);
  await expect(page.getByTestId("total-schedules")).toHaveText(String(FLEET), { timeout: 20_000 });
  timings.push(`overview ${Date.now() - started} ms`);
  await expect(page.getByTestId("status-counts-as-of")).toContainText("As of the last alert pass at");
  await expect(page.getByTestId("status-counts-as-of").locator("time")).toHaveAttribute("datetime", "2030-01-01T10:00:00.000Z");
  await expect(page.getByTestId("status-not-evaluated")).toHaveCount(0);
  const count = async (where: string) => Number((await pool.query<{ n: string }>(`SELECT count(*) AS n ${LIVE} AND ${where}`)).rows[0].n);
  await expect(page.getByTestId("status-count-paused")).toHaveText(String(await count("NOT enabled")));
  await expect(page.getByTestId("status-count-failing")).toHaveText(String(await count("enabled AND EXISTS (SELECT 1 FROM run_queue d WHERE d.schedule_id = schedules.id AND d.state = 'dead')")));
  // Never succeeded first, oldest schedule id first among them: the seed's every fifth schedule.
  const neverSucceeded = await names(`SELECT name ${LIVE} AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.schedule_id = schedules.id AND r.state = 'done') ORDER BY id LIMIT 50`);
  await expect(page.getByTestId("overview-schedule-row")).toHaveCount(50);
  expect(await page.getByTestId("overview-schedule-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-name")))).toEqual(neverSucceeded);
  const oldestPending = await names(
    `SELECT s.name FROM schedules s JOIN (SELECT schedule_id, min(scheduled_for) AS at FROM run_queue WHERE state = 'pending' AND scheduled_for <= sk_now() GROUP BY 1) p ON p.schedule_id = s.id
     WHERE s.deleted_at IS NULL ORDER BY p.at, s.id LIMIT 50`,
  );
  expect(await page.getByTestId("overview-pending-row").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-name")))).toEqual(oldestPending);
  await expect(page.getByTestId("pending-wait-bucket")).toHaveCount(12);
  // A status count leads to the list filtered by it.
  await page.getByRole("link", { name: /failing schedules/ }).click();
  await expect(page).toHaveURL(/\/schedules\?status=failing/);
  await expect(page.getByTestId("status-badge").first()).toHaveText("failing");
});
