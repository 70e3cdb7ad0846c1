import type pg from "pg";
import { expect, test } from "./fixtures";

// Timeouts and stuck runs on the console, against the stack's real worker: a run whose attempt
// passed its schedule's timeoutSeconds shows a timed-out attempt; a run whose lease is still being
// renewed far past its timeout shows a stuck badge on the run page, in the history and on the schedule.
const SUFFIX = Date.now().toString(36);

/**
 * A running run of the schedule `name`, started `ago` before the database clock's now, whose lease
 * (1 hour) is held by a worker that is not this stack's, so nobody takes it over while the clock
 * moves. One transaction: no claim of the stack's worker sees the run pending.
 */
async function holdRunning(sql: pg.Pool, name: string, ago: string): Promise<{ id: number; startedAt: Date }> {
  const client = await sql.connect();
  try {
    await client.query("BEGIN");
    const ins = await client.query<{ id: string }>(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
       SELECT id, partition, sk_now() - $2::interval, sk_now() - $2::interval, sk_now() - $2::interval, 'pending', 0, 3
       FROM schedules WHERE name = $1 AND deleted_at IS NULL RETURNING id`,
      [name, ago],
    );
    const id = Number(ins.rows[0].id);
    const upd = await client.query<{ started_at: Date }>(
      `UPDATE run_queue SET state = 'running', attempts = 1, lease_owner = 'e2e-busy-worker', started_at = sk_now() - $2::interval,
         lease_expires_at = sk_now() + interval '1 hour', run_after = sk_now() + interval '1 hour'
       WHERE run_id = $1 AND state = 'pending' RETURNING started_at`,
      [id, ago],
    );
    expect(upd.rowCount).toBe(1);
    await client.query("COMMIT");
    return { id, startedAt: upd.rows[0].started_at };
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

test("an attempt past the schedule's timeoutSeconds is shown timed out on the run page", async ({ page, request }) => {
  const name = `e2e-timeout-${SUFFIX}`;
  // sleep honours its signal: the worker aborts it after 1 s, and with one attempt allowed the run is dead.
  const created = await request.post("/api/schedules", { data: { name, handler: "sleep", payload: { ms: 60_000 }, everySeconds: 86_400, timeoutSeconds: 1, retry: { maxAttempts: 1 } } });
  expect(created.status(), await created.text()).toBe(201);
  expect((await created.json()).schedule.timeoutSeconds).toBe(1);
  const run = await request.post(`/api/schedules/${encodeURIComponent(name)}/run-now`, { data: {} });
  const id = (await run.json()).run.id as number;
  await expect.poll(async () => (await (await request.get(`/api/runs/${id}`)).json()).run.state, { timeout: 30_000 }).toBe("dead");
  const api = (await (await request.get(`/api/runs/${id}`)).json()).run;
  expect(api.attemptsList.map((a: { outcome: string; error: string }) => [a.outcome, a.error])).toEqual([["timed_out", "timed out after 1 s (the schedule's timeoutSeconds)"]]);

  await page.goto(`/runs/${id}`);
  const attempt = page.getByTestId("attempt").first();
  await expect(attempt).toHaveAttribute("data-outcome", "timed_out");
  await expect(attempt.getByTestId("attempt-outcome")).toHaveText("timed out");
  await expect(attempt.getByTestId("attempt-error")).toContainText("timeoutSeconds");
  await page.goto(`/schedules/${encodeURIComponent(name)}`);
  await expect(page.getByTestId("config-timeout")).toHaveText("1s");
});

test("a run still heartbeating far past its timeout has a stuck badge on the run page, the history and the schedule", async ({ page, request, sql }) => {
  const name = `e2e-stuck-${SUFFIX}`;
  // timeoutSeconds 30: stuck after 30 + max(30, 60) = 90 s of running.
  const created = await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400, timeoutSeconds: 30 } });
  expect(created.status(), await created.text()).toBe(201);
  // A run claimed 10 minutes ago by a worker that still renews its lease.
  const { id, startedAt } = await holdRunning(sql, name, "10 minutes");
  const api = (await (await request.get(`/api/runs/${id}`)).json()).run;
  expect([api.state, api.stuck, api.stuckSince]).toEqual(["running", true, new Date(startedAt.getTime() + 90_000).toISOString()]);
  expect((await (await request.get(`/api/schedules/${encodeURIComponent(name)}`)).json()).schedule).toMatchObject({ stuck: true, stuckSince: api.stuckSince });

  await page.goto(`/runs/${id}`);
  await expect(page.getByTestId("run-state")).toHaveText("running");
  await expect(page.getByTestId("stuck-badge")).toContainText(/stuck\s*since/);
  await page.goto(`/schedules/${encodeURIComponent(name)}`);
  await expect(page.getByTestId("schedule-stuck")).toContainText(/stuck\s*since/);
  await expect(page.locator(`[data-testid="run-row"][data-run-id="${id}"]`).getByTestId("run-stuck")).toHaveText("stuck");
  await page.screenshot({ path: "e2e/output/screenshots/stuck-schedule.png", fullPage: true });
});

test("a stuck run is marked on the Schedules list and the Runs list once the database clock passes its threshold", async ({ page, request, sql }) => {
  const name = `e2e-stuck-list-${SUFFIX}`;
  // timeoutSeconds 30: stuck after 90 s of running. The run starts 30 s before the clock's now.
  const created = await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400, timeoutSeconds: 30 } });
  expect(created.status(), await created.text()).toBe(201);
  const { id } = await holdRunning(sql, name, "30 seconds");
  const scheduleRow = page.locator(`[data-testid="schedule-row"][data-name="${name}"]`);
  const runRow = page.locator(`[data-testid="run-row"][data-run-id="${id}"]`);
  const openSchedules = async () => {
    await page.goto("/schedules");
    await page.getByTestId("schedule-search").fill(name);
    await expect(scheduleRow).toHaveCount(1);
  };
  const openRuns = async () => {
    await page.goto("/runs");
    await page.getByTestId("runs-schedule-filter").fill(name);
    await page.getByTestId("runs-schedule-filter").press("Enter");
    await expect(runRow).toHaveCount(1);
  };

  // 30 s into a 90 s threshold: running, not stuck, on both lists.
  await openSchedules();
  await expect(scheduleRow.getByTestId("schedule-row-stuck")).toHaveCount(0);
  await openRuns();
  await expect(runRow).toHaveAttribute("data-state", "running");
  await expect(runRow.getByTestId("run-stuck")).toHaveCount(0);

  // The database clock moves 2 minutes on: the attempt has run 150 s, past 90 s, and its lease is still live.
  await sql.query("UPDATE sk_clock SET frozen_at = NULL, shift = shift + interval '2 minutes' WHERE id = 1");
  try {
    const api = (await (await request.get(`/api/runs/${id}`)).json()).run;
    expect([api.state, api.stuck]).toEqual(["running", true]);
    await openSchedules();
    await expect(scheduleRow.getByTestId("schedule-row-stuck")).toContainText(/stuck\s*since/);
    await page.screenshot({ path: "e2e/output/screenshots/stuck-schedules-list.png", fullPage: true });
    await openRuns();
    await expect(runRow.getByTestId("run-stuck")).toHaveText("stuck");
    await expect(runRow).toHaveAttribute("data-state", "running");
  } finally {
    await sql.query("UPDATE sk_clock SET frozen_at = NULL, shift = interval '0' WHERE id = 1");
  }
});
