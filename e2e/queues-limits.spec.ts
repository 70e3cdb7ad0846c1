import { expect, test } from "./fixtures";

// Queues and concurrency limits as an operator reads them: a schedule's queue and maxConcurrent on
// its page, and each handler's fleet-wide limit (PUT /api/handlers/{name}/limit) on the Workers
// page. Set through the API, checked against the rows in the database, read on the pages.
const SUFFIX = Date.now().toString(36);

test("the schedule page shows its queue and maxConcurrent", async ({ page, request, sql }) => {
  const limited = `e2e-queue-${SUFFIX}`;
  const plain = `e2e-queue-plain-${SUFFIX}`;
  const forbid = `e2e-queue-forbid-${SUFFIX}`;
  for (const data of [
    { name: limited, handler: "noop", everySeconds: 86_400, queue: "reports", maxConcurrent: 3 },
    { name: plain, handler: "noop", everySeconds: 86_400 },
    { name: forbid, handler: "noop", everySeconds: 86_400, overlap: "forbid" },
  ]) {
    const created = await request.post("/api/schedules", { data });
    expect(created.status(), await created.text()).toBe(201);
  }
  const rows = await sql.query<{ name: string; queue: string; max_concurrent: number | null }>("SELECT name, queue, max_concurrent FROM schedules WHERE name = ANY($1) AND deleted_at IS NULL", [[limited, plain, forbid]]);
  expect(Object.fromEntries(rows.rows.map((r) => [r.name, [r.queue, r.max_concurrent]]))).toEqual({ [limited]: ["reports", 3], [plain]: ["default", null], [forbid]: ["default", null] });

  await page.goto(`/schedules/${encodeURIComponent(limited)}`);
  await expect(page.getByTestId("config-queue")).toHaveText("reports");
  await expect(page.getByTestId("config-max-concurrent")).toHaveText("3 at once");
  await page.goto(`/schedules/${encodeURIComponent(plain)}`);
  await expect(page.getByTestId("config-queue")).toHaveText("default");
  await expect(page.getByTestId("config-max-concurrent")).toHaveText("no limit");
  await page.goto(`/schedules/${encodeURIComponent(forbid)}`);
  await expect(page.getByTestId("config-max-concurrent")).toHaveText("1 at once (overlap forbid)");

  // An edit shows at once: the queue moves and the limit goes.
  const version = (await (await request.get(`/api/schedules/${encodeURIComponent(limited)}`)).json()).schedule.version as number;
  const edited = await request.patch(`/api/schedules/${encodeURIComponent(limited)}`, { data: { version, queue: "nightly", maxConcurrent: null } });
  expect(edited.status(), await edited.text()).toBe(200);
  await page.goto(`/schedules/${encodeURIComponent(limited)}`);
  await expect(page.getByTestId("config-queue")).toHaveText("nightly");
  await expect(page.getByTestId("config-max-concurrent")).toHaveText("no limit");
  await page.screenshot({ path: "e2e/output/screenshots/schedule-queue.png", fullPage: true });
});

test("the Workers page shows each handler's fleet-wide limit, as set through the API", async ({ page, request, sql }) => {
  const row = (handler: string) => page.locator(`[data-testid="handler-row"][data-handler="${handler}"]`);
  try {
    const set = await request.put("/api/handlers/sleep/limit", { data: { maxConcurrent: 4 } });
    expect(set.status(), await set.text()).toBe(200);
    const stored = await sql.query<{ handler: string; max_concurrent: number }>("SELECT handler, max_concurrent FROM handler_limits WHERE handler IN ('sleep', 'noop')");
    expect(stored.rows.map((r) => [r.handler, r.max_concurrent])).toEqual([["sleep", 4]]);

    await page.goto("/workers");
    await expect(row("sleep").getByTestId("handler-limit")).toHaveText("4 at once");
    await expect(row("noop").getByTestId("handler-limit")).toHaveText("none");
    // The stack's worker serves the built-ins.
    await expect(row("sleep").getByTestId("handler-served-by")).toHaveText(/^\d+ live workers?$/);
    await page.screenshot({ path: "e2e/output/screenshots/workers-handler-limits.png", fullPage: true });

    // Removed through the API: the page, refreshing itself, says so without a reload.
    const removed = await request.put("/api/handlers/sleep/limit", { data: { maxConcurrent: null } });
    expect(removed.status(), await removed.text()).toBe(200);
    expect((await sql.query("SELECT 1 FROM handler_limits WHERE handler = 'sleep'")).rowCount).toBe(0);
    await expect(row("sleep").getByTestId("handler-limit")).toHaveText("none");
  } finally {
    await request.put("/api/handlers/sleep/limit", { data: { maxConcurrent: null } });
  }
});
