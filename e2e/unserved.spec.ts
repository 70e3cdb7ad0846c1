import { startReceiver } from "../lib/testing/receiver";
import { expect, stackInfo, test } from "./fixtures";
import { startHandlerWorker } from "./stack";

// Routing as an operator sees it: a run whose handler no live worker serves waits pending, no
// attempt used, and its page and its schedule's page say which handler and since when (the run's
// run_after, read from the database). A worker serving the handler starts: the run runs on it (the
// handler's own report to a receiver outside the product) and the notice is gone.
const SUFFIX = Date.now().toString(36);

test("a run whose handler no worker serves says so on the run and schedule pages, and runs once a worker serving it starts", async ({ page, request, sql }) => {
  test.setTimeout(120_000);
  const handler = `e2e-unserved-${SUFFIX}`;
  const name = `e2e-unserved-${SUFFIX}`;
  const created = await request.post("/api/schedules", { data: { name, handler, everySeconds: 86_400 } });
  expect(created.status(), await created.text()).toBe(201);
  // Saved with a warning: no worker has registered the handler yet.
  expect((await created.json()).warnings).toEqual([expect.objectContaining({ field: "handler", message: expect.stringContaining(`"${handler}"`) })]);
  const runNow = await request.post(`/api/schedules/${encodeURIComponent(name)}/run-now`, { data: {} });
  expect(runNow.status(), await runNow.text()).toBe(200);
  const id = (await runNow.json()).run.id as number;

  // The stack's worker serves the built-ins only: the run waits, no attempt used, and it is the schedule's only waiting run.
  const waiting = () =>
    sql.query<{ id: string; state: string; attempts: number; run_after: Date }>(
      `SELECT r.id, r.state, r.attempts, r.run_after FROM runs r JOIN schedules s ON s.id = r.schedule_id
       WHERE s.name = $1 AND s.deleted_at IS NULL AND r.state = 'pending' AND r.run_after <= sk_now()`,
      [name],
    );
  await expect.poll(async () => (await waiting()).rows.map((r) => Number(r.id)), { timeout: 5_000 }).toEqual([id]);
  const before = (await waiting()).rows[0];
  expect(before.attempts).toBe(0);
  const since = before.run_after.toISOString();

  await page.goto(`/runs/${id}`);
  const notice = page.getByTestId("unserved-handler");
  await expect(notice).toContainText(`No live worker serves handler ${handler} since`);
  await expect(notice.locator("time")).toHaveAttribute("datetime", since);
  await expect(page.getByTestId("run-state")).toHaveText("pending");
  await page.screenshot({ path: "e2e/output/screenshots/unserved-run.png", fullPage: true });
  await page.goto(`/schedules/${encodeURIComponent(name)}`);
  await expect(notice).toContainText(`No live worker serves handler ${handler} since`);
  await expect(notice.locator("time")).toHaveAttribute("datetime", since);
  // Still waiting, still no attempt, after the pages were read.
  expect((await sql.query("SELECT state, attempts FROM runs WHERE id = $1", [id])).rows[0]).toEqual({ state: "pending", attempts: 0 });

  const receiver = await startReceiver();
  const workerId = `e2e-serves-${SUFFIX}`;
  const worker = startHandlerWorker({ databaseUrl: stackInfo().databaseUrl, id: workerId, handlers: [handler], receiver: receiver.url });
  try {
    await expect.poll(() => receiver.received.map((r) => r.body), { timeout: 60_000 }).toContainEqual({ handler, workerId, runId: id, attempt: 1 });
    await expect.poll(async () => (await sql.query("SELECT state, attempts, worker_id FROM runs WHERE id = $1", [id])).rows[0], { timeout: 15_000 }).toEqual({ state: "done", attempts: 1, worker_id: workerId });

    // The schedule page, polling, drops the notice; the run page shows the run done without one.
    await expect(notice).toHaveCount(0, { timeout: 15_000 });
    await page.goto(`/runs/${id}`);
    await expect(page.getByTestId("run-state")).toHaveText("done");
    await expect(notice).toHaveCount(0);
  } finally {
    await worker.stop();
    await receiver.close();
  }
});
