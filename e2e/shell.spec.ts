import { OverviewPage } from "./pages/overview";
import { expect, test } from "./fixtures";

test("the console opens on the Overview with live data from the database", async ({ page }) => {
  const overview = new OverviewPage(page);
  await overview.goto();
  await expect(page.getByRole("heading", { name: "Overview" })).toBeVisible();
  await expect(overview.totals()).toBeVisible();
  // The worker the stack started registered itself; the Overview reads that through the API.
  await expect(overview.stat("workers")).toHaveText("1", { timeout: 15_000 });
  await page.screenshot({ path: "e2e/output/screenshots/overview.png", fullPage: true });
});

test("navigation reaches Schedules, Runs and Workers", async ({ page }) => {
  await page.goto("/");
  for (const [nav, heading] of [["schedules", "Schedules"], ["runs", "Runs"], ["workers", "Workers"]] as const) {
    await page.getByTestId(`nav-${nav}`).click();
    await expect(page.getByRole("heading", { name: heading, exact: true })).toBeVisible();
  }
  await expect(page.getByTestId("worker-row").first()).toBeVisible();
  // Each worker's queues with their concurrency and free slots (the stack's worker serves default).
  await expect(page.getByTestId("worker-queues").first()).toContainText(/default \d+ \/ \d+ \(\d+ free\)/);
  await expect(page.getByTestId("worker-handlers").first()).toContainText("noop");
  await page.screenshot({ path: "e2e/output/screenshots/workers.png", fullPage: true });
});

test("the health endpoint reports the database up", async ({ request }) => {
  const res = await request.get("/api/health");
  expect(res.status()).toBe(200);
  expect(await res.json()).toEqual({ ok: true, database: "up" });
});
