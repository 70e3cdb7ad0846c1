import type { APIRequestContext, Page } from "@playwright/test";
import { expect, test } from "./fixtures";
import { ScheduleDetailPage } from "./pages/schedule-detail";
import { ScheduleFormPage } from "./pages/schedule-form";

// These tests share one schedule and build on each other: create → edit → worker runs it.
test.describe.configure({ mode: "serial" });

const NAME = `e2e-every-2s-${Date.now().toString(36)}`;
const SHOTS = "e2e/output/screenshots";

async function shot(page: Page, name: string) {
  await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
}

async function api<T>(request: APIRequestContext, method: "get" | "post" | "patch", url: string, data?: unknown): Promise<T> {
  const res = await request[method](url, data === undefined ? undefined : { data });
  expect(res.ok(), `${method.toUpperCase()} ${url} → ${res.status()} ${await res.text()}`).toBeTruthy();
  return res.json();
}

test("create a schedule through the form, see its next fire times, save, see it on the Overview", async ({ page }) => {
  const form = new ScheduleFormPage(page);
  await form.gotoNew();
  await form.input("name").fill(NAME);
  await form.input("handler").selectOption("noop");
  await form.useInterval(2);
  await expect(form.description()).toHaveText("Every 2 seconds");
  await expect(form.nextFireTimes()).toHaveCount(5);
  // A cron expression in a zone: the preview follows the zone.
  await page.getByTestId("timing-cron").check();
  await form.input("cron").fill("0 9 * * 1-5");
  await form.input("timezone").fill("Europe/London");
  await expect(form.description()).toContainText("Monday through Friday");
  await expect(form.description()).toContainText("Europe/London");
  await expect(form.nextFireTimes()).toHaveCount(5);
  await expect(page.getByTestId("catch-up-explanation")).toContainText("only the latest missed slot runs");
  await form.useInterval(2);
  await form.input("timezone").fill("UTC");
  await expect(form.description()).toHaveText("Every 2 seconds");
  await shot(page, "schedule-form");
  await form.save();

  await expect(page).toHaveURL(new RegExp(`/schedules/${NAME}$`));
  await expect(page.getByRole("heading", { name: NAME })).toBeVisible();
  await page.getByTestId("nav-overview").click();
  await expect(page.getByTestId("overview-schedule-row").filter({ hasText: NAME })).toBeVisible();
});

test("edit its catch-up policy and max lateness; reload; the change persisted", async ({ page, request }) => {
  const detail = new ScheduleDetailPage(page);
  await detail.goto(NAME);
  await page.getByTestId("edit-schedule").click();
  const form = new ScheduleFormPage(page);
  await expect(form.input("everySeconds")).toHaveValue("2");
  await form.catchUp("all");
  await expect(page.getByTestId("catch-up-explanation")).toContainText("every missed slot runs");
  await form.input("maxLatenessSeconds").fill("120");
  await form.save();
  await expect(page).toHaveURL(new RegExp(`/schedules/${NAME}$`));
  await page.reload();
  await expect(detail.config("catch-up")).toHaveText("all");
  await expect(detail.config("max-lateness")).toHaveText("120s");

  // Someone else edits while our form is open: our save is refused, not silently applied.
  await page.getByTestId("edit-schedule").click();
  await expect(form.input("maxLatenessSeconds")).toHaveValue("120");
  const { schedule } = await api<{ schedule: { version: number } }>(request, "get", `/api/schedules/${NAME}`);
  await api(request, "patch", `/api/schedules/${NAME}`, { maxLatenessSeconds: 300, version: schedule.version });
  await form.input("maxLatenessSeconds").fill("60");
  await form.save();
  await expect(page.getByTestId("conflict-banner")).toContainText("changed by someone else");
  await page.getByTestId("conflict-reload").click();
  await expect(form.input("maxLatenessSeconds")).toHaveValue("300");
});

test("a worker runs it; the run appears in history with its attempt, without reloading", async ({ page }) => {
  const detail = new ScheduleDetailPage(page);
  await detail.goto(NAME);
  const done = detail.runRows("done").first();
  await expect(done).toBeVisible({ timeout: 30_000 });
  // Polling, not a reload, brings the next slot's run in: a newer done run replaces the top row.
  const firstSeen = Number(await done.getAttribute("data-run-id"));
  await expect.poll(async () => Number(await done.getAttribute("data-run-id")), { timeout: 15_000 }).toBeGreaterThan(firstSeen);
  await expect(done.getByTestId("run-attempts")).toHaveText(/^1\//);
  await expect(done.getByTestId("run-worker")).not.toHaveText("—");
  await expect(page.getByTestId("health-since")).not.toHaveText("never");
  await shot(page, "schedule-detail");

  await done.getByTestId("run-link").click();
  await expect(page.getByRole("heading", { name: /^Run #\d+$/ })).toBeVisible();
  await expect(page.getByTestId("attempt")).toHaveCount(1);
  await expect(page.getByTestId("attempt-outcome")).toHaveText("succeeded");
  await expect(page.getByTestId("idempotency-key")).toHaveText(/^sk:\d+:\d{4}-\d{2}-\d{2}T/);
  await shot(page, "run-detail");
});

test("the health charts render with data", async ({ page }) => {
  await page.goto("/");
  const charts = page.getByTestId("health-charts");
  await expect(charts).toBeVisible();
  // Bars of runs by outcome and drawn lines: not an empty frame. (Other specs' schedules share the
  // Overview, and one that never succeeded has no since-last-success line, so look for any drawn one.)
  await expect(page.getByTestId("chart-outcomes").locator(".recharts-bar-rectangle path, path.recharts-rectangle").first()).toBeAttached({ timeout: 20_000 });
  await expect(page.getByTestId("chart-since-last-success").locator('path.recharts-line-curve[d^="M"]').first()).toBeAttached();
  await expect(page.getByTestId("chart-oldest-pending").locator('path.recharts-line-curve[d^="M"]').first()).toBeAttached();
  await expect(page.getByTestId("overview-schedule-row").filter({ hasText: NAME }).getByTestId("status-badge")).toHaveText(/healthy|late|backlogged/);
  await shot(page, "overview");
  // The schedule's own charts draw its line.
  await new ScheduleDetailPage(page).goto(NAME);
  await expect(page.getByTestId("chart-since-last-success").locator(`path.recharts-line-curve[name="${NAME}"]`)).toHaveAttribute("d", /^M/, { timeout: 20_000 });
  await expect(page.getByTestId("chart-outcomes").locator(".recharts-bar-rectangle path, path.recharts-rectangle").first()).toBeAttached();
  await page.getByTestId("nav-schedules").click();
  await expect(page.getByTestId("schedule-row").filter({ hasText: NAME })).toBeVisible();
  await shot(page, "schedules");
});

test("a failing handler produces a dead run; Re-queue sends it back to pending and then done", async ({ page, request, sql }) => {
  const name = `e2e-fails-${Date.now().toString(36)}`;
  // One attempt, failing for good: the manual run goes dead at attempt 1.
  await api(request, "post", "/api/schedules", {
    name,
    handler: "fail",
    payload: { nonRetryable: true, message: "e2e: upstream said no" },
    everySeconds: 86_400,
    retry: { maxAttempts: 1, baseSeconds: 1, capSeconds: 1 },
  });
  await api(request, "post", `/api/schedules/${name}/run-now`, {});
  await page.goto(`/runs?state=dead`);
  const row = page.getByTestId("runs-table").locator('[data-testid="run-row"]').filter({ hasText: name });
  await expect(row).toBeVisible({ timeout: 30_000 });
  await expect(row).toHaveAttribute("data-state", "dead");
  const runId = Number(await row.getAttribute("data-run-id"));
  await shot(page, "runs");

  // The run detail shows the failed attempt and its error as text.
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("attempt-outcome")).toHaveText("failed");
  await expect(page.getByTestId("attempt-error")).toContainText("e2e: upstream said no");

  // Fix the cause (the claim reads the schedule's handler), then re-queue from the Runs page.
  const { schedule } = await api<{ schedule: { version: number } }>(request, "get", `/api/schedules/${name}`);
  await api(request, "patch", `/api/schedules/${name}`, { handler: "noop", payload: {}, version: schedule.version });
  await page.goto(`/runs?state=dead`);
  const requeued = page.waitForResponse((r) => r.url().includes(`/api/runs/${runId}/requeue`) && r.request().method() === "POST");
  await row.getByTestId("requeue-run").click();
  const res = await requeued;
  expect(res.ok()).toBeTruthy();
  expect(await res.json()).toMatchObject({ requeued: runId });
  await expect(row).toHaveCount(0); // left the dead list at once
  // The worker (250 ms poll) claims it almost at once, so "pending" is read from what the re-queue
  // transaction recorded rather than raced on screen.
  const audit = await sql.query(`SELECT after FROM audit_log WHERE action = 'run.requeue' AND target_id = $1`, [String(runId)]);
  expect(audit.rows[0]?.after).toMatchObject({ state: "pending" });

  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId("run-summary").getByTestId("run-state")).toHaveText("done", { timeout: 30_000 });
  await expect(page.getByTestId("attempt")).toHaveCount(2);
});

test("invalid cron and invalid JSON show inline errors and save nothing", async ({ page, request }) => {
  const name = `e2e-invalid-${Date.now().toString(36)}`;
  const form = new ScheduleFormPage(page);
  await form.gotoNew();
  await form.input("name").fill(name);
  await form.input("cron").fill("61 * * * *");
  await expect(form.error("cron")).toContainText("Invalid cron");
  await form.input("payload").fill('{ "url": ');
  await expect(form.error("payload")).toContainText("not valid JSON");
  await form.save();
  await expect(page).toHaveURL(/\/schedules\/new$/);
  await expect(form.error("cron")).toBeVisible();
  expect((await request.get(`/api/schedules/${name}`)).status()).toBe(404);

  // Errors the API finds are mapped onto their field too (here: a name that is taken).
  await form.input("cron").fill("*/5 * * * *");
  await form.input("payload").fill("{}");
  await form.input("name").fill(NAME);
  await form.save();
  await expect(form.error("name")).toBeVisible();
  await expect(page).toHaveURL(/\/schedules\/new$/);
});
