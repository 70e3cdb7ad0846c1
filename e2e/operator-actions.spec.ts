// Operator journeys of schedules as code and of settling runs by hand, in a real browser against
// the real stack: a schedule applied from a file with the `slotkeeper` CLI shows where it is
// managed from and, once edited in the console, that it drifted and in which field; a pending run is cancelled and a dead run
// discarded from the run page, each with a reason, and the database says so; schedules are
// filtered by owner and paused in bulk by a tag alone with a note; a pause with only a resume
// time reads "paused until" that time.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "./fixtures";
import { ScheduleFormPage } from "./pages/schedule-form";

const suffix = Date.now().toString(36);

/** The `slotkeeper` bin as a user runs it against this console, with --json: its parsed answer. */
function slotkeeper(url: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["bin/slotkeeper.mjs", ...args], { env: { ...process.env, SLOTKEEPER_URL: url }, encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`slotkeeper ${args.join(" ")} failed: ${stderr}`));
      else resolve(JSON.parse(stdout) as Record<string, unknown>);
    });
  });
}

test("a schedule applied from a file with the CLI shows its source; a console edit shows as drift until the next apply, which keeps a noted pause", async ({ page, baseURL, sql }) => {
  const name = `e2e-managed-${suffix}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-e2e-apply-"));
  const file = path.join(dir, "jobs.yaml");
  fs.writeFileSync(file, `schedules:\n  - name: ${name}\n    handler: noop\n    everySeconds: 3600\n    description: from the file\n`);

  // The plan changes nothing; the apply creates it, managed by the file's name.
  expect(await slotkeeper(baseURL!, ["plan", file, "--json"])).toMatchObject({ created: [name], updated: [], deleted: [] });
  expect((await sql.query("SELECT 1 FROM schedules WHERE name = $1", [name])).rowCount).toBe(0);
  expect(await slotkeeper(baseURL!, ["apply", file, "--json"])).toMatchObject({ created: [name], updated: [], deleted: [] });
  await page.goto("/schedules");
  const row = page.locator(`[data-testid="schedule-row"][data-name="${name}"]`);
  await expect(row.getByTestId("managed-by")).toHaveText("managed by jobs.yaml");
  await expect(row.getByTestId("drift-badge")).toHaveCount(0);

  // An edit in the console is drift, named by field, on the page and on the list.
  await page.goto(`/schedules/${name}`);
  await expect(page.getByTestId("managed-notice").getByTestId("managed-by")).toHaveText("jobs.yaml");
  await page.getByTestId("edit-schedule").click();
  const form = new ScheduleFormPage(page);
  await form.input("owner").fill("team-by-hand");
  await form.save();
  await expect(page).toHaveURL(new RegExp(`/schedules/${name}$`));
  await expect(page.getByTestId("drift-notice")).toContainText("owner");
  await page.goto("/schedules");
  await expect(row.getByTestId("drift-badge")).toHaveText("drifted: owner");

  // Paused by hand with a note in an incident: the next apply puts the owner back and keeps the pause.
  await page.goto(`/schedules/${name}`);
  await page.getByTestId("pause-note-open").click();
  await page.getByTestId("pause-note").fill("vendor outage");
  await page.getByTestId("pause-confirm").click();
  await expect(page.getByTestId("paused-note")).toContainText("vendor outage");
  const again = await slotkeeper(baseURL!, ["apply", file, "--json"]);
  expect(again).toMatchObject({ created: [], updated: [name], keptPaused: [expect.objectContaining({ name })] });
  await page.reload();
  await expect(page.getByTestId("drift-notice")).toHaveCount(0);
  await expect(page.getByTestId("paused-note")).toContainText("vendor outage");
  await expect(page.getByTestId("status-badge").first()).toHaveText("paused");
  const stored = await sql.query("SELECT owner, enabled, managed_by FROM schedules WHERE name = $1", [name]);
  expect(stored.rows).toEqual([{ owner: null, enabled: false, managed_by: "jobs.yaml" }]);
  // Applying the same file once more changes nothing.
  expect(await slotkeeper(baseURL!, ["apply", file, "--json"])).toMatchObject({ created: [], updated: [], unchanged: [name] });
  fs.rmSync(dir, { recursive: true, force: true });
});

test("an operator cancels a pending run and discards a dead one from the run page, with reasons", async ({ page, request, sql }) => {
  // No worker serves this handler, so its manual run stays pending (routing) until cancelled.
  const waiting = `e2e-cancel-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name: waiting, handler: "e2e-served-by-nobody", everySeconds: 86_400, enabled: false } })).status()).toBe(201);
  const run = ((await (await request.post(`/api/schedules/${waiting}/run-now`, { data: {} })).json()) as { run: { id: number } }).run;
  await page.goto(`/runs/${run.id}`);
  await expect(page.getByTestId("requeue-run")).toHaveCount(0);
  await page.getByTestId("cancel-run").click();
  await page.getByTestId("cancel-reason").fill("not needed this week");
  await page.getByTestId("cancel-confirm").click();
  await expect(page.getByTestId("run-summary")).toContainText("cancelled by an operator");
  await expect(page.getByTestId("cancel-run")).toHaveCount(0);
  const cancelled = await sql.query("SELECT r.state::text AS state, (SELECT count(*)::int FROM run_queue q WHERE q.run_id = r.id) AS queued, (SELECT after->>'reason' FROM audit_log WHERE action = 'run.cancel' AND target_id = r.id::text) AS reason FROM runs r WHERE r.id = $1", [run.id]);
  expect(cancelled.rows).toEqual([{ state: "skipped", queued: 0, reason: "not needed this week" }]);

  // A run that fails once with no retries is dead; discarding it leaves its schedule not failing.
  const failing = `e2e-discard-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name: failing, handler: "fail", payload: { nonRetryable: true }, everySeconds: 86_400, retry: { maxAttempts: 1, baseSeconds: 1, capSeconds: 1 } } })).status()).toBe(201);
  expect((await request.post(`/api/schedules/${failing}/run-now`, { data: {} })).ok()).toBeTruthy();
  let dead = 0;
  await expect(async () => {
    const runs = (await (await request.get(`/api/runs?state=dead&schedule=${failing}`)).json()) as { runs: { id: number }[] };
    expect(runs.runs.length).toBe(1);
    dead = runs.runs[0].id;
  }).toPass({ timeout: 30_000 });
  await page.goto(`/runs/${dead}`);
  await expect(page.getByTestId("requeue-run")).toBeVisible();
  await page.getByTestId("discard-run").click();
  await page.getByTestId("discard-reason").fill("known vendor bug");
  await page.getByTestId("discard-confirm").click();
  await expect(page.getByTestId("run-summary")).toContainText("discarded by an operator");
  await expect(page.getByTestId("requeue-run")).toHaveCount(0);
  const discarded = await sql.query("SELECT state::text AS state FROM runs WHERE id = $1", [dead]);
  expect(discarded.rows).toEqual([{ state: "skipped" }]);
  await page.goto(`/schedules/${failing}`);
  await expect(page.getByTestId("health-dead")).toContainText("0");
});

test("a bulk re-queue by filter reaches every dead run the filter matches, beyond the page", async ({ page, request, sql }) => {
  const name = `e2e-bulk-${suffix}`;
  // Served by no worker: once re-queued, the runs wait pending where the test can count them.
  expect((await request.post("/api/schedules", { data: { name, handler: "e2e-served-by-nobody", everySeconds: 86_400, enabled: false } })).status()).toBe(201);
  await sql.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
     SELECT s.id, s.partition, t, t, t, 'dead', 3, 3 FROM schedules s, generate_series(now() - interval '2 days', now() - interval '2 days' + interval '79 minutes', interval '1 minute') t
     WHERE s.name = $1`,
    [name],
  );
  await page.goto("/runs");
  await page.getByTestId("runs-state-filter").selectOption("dead");
  await page.getByTestId("runs-schedule-filter").fill(name);
  await page.getByTestId("runs-schedule-filter").press("Enter");
  await expect(page.getByTestId("runs-table").locator('[data-testid="run-row"]')).toHaveCount(50); // one page
  await page.getByTestId("bulk-requeue").click();
  await expect(page.getByTestId("bulk-requeue-count")).toHaveText("80 dead runs match.");
  await page.getByTestId("bulk-requeue-confirm").click();
  await expect(page.getByTestId("notice")).toHaveText("Re-queued 80 dead runs.");
  const states = await sql.query("SELECT r.state::text AS state, count(*)::int AS n FROM runs r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = $1 GROUP BY 1", [name]);
  expect(states.rows).toEqual([{ state: "pending", n: 80 }]);
  const audited = await sql.query("SELECT count(*)::int AS n FROM audit_log a JOIN schedules s ON s.id = a.schedule_id WHERE s.name = $1 AND a.action = 'run.requeue'", [name]);
  expect(audited.rows).toEqual([{ n: 80 }]);
  await expect(page.getByTestId("runs-empty")).toBeVisible();
});

test("a pause with a note and a resume time shows on the list and the page, and a worker resumes it when the time comes", async ({ page, request, sql }) => {
  const name = `e2e-resume-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 3600 } })).status()).toBe(201);
  const now = ((await sql.query("SELECT sk_now() AS now")).rows[0] as { now: Date }).now.getTime();
  // Two minutes on, as the browser's datetime-local input writes it (local time, minutes).
  const local = await page.evaluate((ms) => {
    const d = new Date(ms);
    return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  }, now + 120_000);
  await page.goto(`/schedules/${name}`);
  await page.getByTestId("pause-note-open").click();
  await page.getByTestId("pause-note").fill("database upgrade");
  await page.getByTestId("pause-resume-at").fill(local);
  await page.getByTestId("pause-confirm").click();
  await expect(page.getByTestId("paused-note")).toContainText("database upgrade");
  const stored = (await sql.query("SELECT enabled, paused_note, resume_at FROM schedules WHERE name = $1", [name])).rows[0] as { enabled: boolean; paused_note: string; resume_at: Date };
  expect({ enabled: stored.enabled, note: stored.paused_note }).toEqual({ enabled: false, note: "database upgrade" });
  expect(stored.resume_at.getTime()).toBeGreaterThan(now);
  await page.goto("/schedules");
  const listed = page.locator(`[data-testid="schedule-row"][data-name="${name}"]`).getByTestId("schedule-paused-note");
  await expect(listed).toContainText(/^paused until .+: database upgrade$/);
  await expect(listed.locator("time")).toHaveAttribute("datetime", stored.resume_at.toISOString());

  // The database clock moves past the resume time; the worker's auto-resume loop (every 5 s) resumes it.
  await sql.query("UPDATE sk_clock SET frozen_at = NULL, shift = ($1::timestamptz - now()) WHERE id = 1", [new Date(stored.resume_at.getTime() + 60_000)]);
  try {
    await expect(async () => {
      const r = (await sql.query("SELECT enabled, paused_note FROM schedules WHERE name = $1", [name])).rows[0];
      expect(r).toEqual({ enabled: true, paused_note: null });
    }).toPass({ timeout: 30_000 });
    const audit = await sql.query("SELECT actor FROM audit_log WHERE action = 'schedule.resume' AND target_id = $1", [name]);
    expect(audit.rows).toEqual([{ actor: "system" }]);
    await page.goto(`/schedules/${name}`);
    await expect(page.getByTestId("paused-note")).toHaveCount(0);
    await expect(page.getByTestId("pause")).toBeVisible();
  } finally {
    await sql.query("UPDATE sk_clock SET frozen_at = NULL, shift = interval '0' WHERE id = 1");
  }
});

test("run now with a payload runs once with that payload and leaves the schedule's alone", async ({ page, request, sql }) => {
  const name = `e2e-payload-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400, payload: { region: "eu" } } })).status()).toBe(201);
  await page.goto(`/schedules/${name}`);
  await page.getByTestId("run-now-payload-open").click();
  await expect(page.getByTestId("run-now-payload")).toHaveValue(/"region": "eu"/);
  await page.getByTestId("run-now-payload").fill('{ "region": "us", "rerun": true }');
  await page.getByTestId("run-now-payload-confirm").click();
  await expect(page.getByTestId("notice")).toContainText("with its own payload");
  const rows = await sql.query("SELECT r.id, r.payload_override FROM runs r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = $1 AND r.origin = 'manual'", [name]);
  expect(rows.rows.map((r) => r.payload_override)).toEqual([{ region: "us", rerun: true }]);
  expect((await sql.query("SELECT payload FROM schedules WHERE name = $1", [name])).rows).toEqual([{ payload: { region: "eu" } }]);
  await page.goto(`/runs/${rows.rows[0].id}`);
  await expect(page.getByTestId("run-payload-override")).toContainText('"rerun": true');
});

test("a bulk pause by a tag alone carries a note: the server's count first, then each matching schedule paused with it", async ({ page, request, sql }) => {
  const tag = `e2e-bulk-tag-${suffix}`;
  const names = ["a", "b", "c"].map((x) => `e2e-bulk-tag-${x}-${suffix}`);
  const other = `e2e-bulk-other-${suffix}`;
  for (const name of names) expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400, tags: [tag] } })).status()).toBe(201);
  // Already paused: a bulk pause does not count it or touch its note.
  const quiet = `e2e-bulk-tag-quiet-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name: quiet, handler: "noop", everySeconds: 86_400, tags: [tag], enabled: false } })).status()).toBe(201);
  expect((await request.post("/api/schedules", { data: { name: other, handler: "noop", everySeconds: 86_400, tags: [`${tag}-x`] } })).status()).toBe(201);
  const state = async () =>
    (await sql.query("SELECT name, enabled, paused_note FROM schedules WHERE name = ANY($1) AND deleted_at IS NULL ORDER BY name", [[...names, quiet, other]])).rows as { name: string; enabled: boolean; paused_note: string | null }[];
  const before = await state();

  await page.goto("/schedules");
  await page.getByTestId("schedule-tag-filter").fill(tag);
  await expect(page.getByTestId("schedule-row")).toHaveCount(4);
  await expect(page).toHaveURL(new RegExp(`[?&]tag=${tag}(&|$)`));
  await page.getByTestId("bulk-pause").click();
  await expect(page.getByTestId("bulk-pause-count")).toHaveText("3 schedules match.");
  expect(await state()).toEqual(before); // counting changes nothing
  await page.getByTestId("bulk-pause-note").fill("quarterly maintenance");
  await page.getByTestId("bulk-pause-confirm").click();
  await expect(page.getByTestId("notice")).toHaveText("Paused 3 schedules.");

  expect(await state()).toEqual(
    [...names.map((name) => ({ name, enabled: false, paused_note: "quarterly maintenance" })), { name: other, enabled: true, paused_note: null }, { name: quiet, enabled: false, paused_note: null }].sort((a, b) => a.name.localeCompare(b.name)),
  );
  const audited = await sql.query("SELECT target_id, after->>'note' AS note FROM audit_log WHERE action = 'schedule.pause' AND target_id = ANY($1) ORDER BY target_id", [[...names, quiet, other]]);
  expect(audited.rows).toEqual(names.map((n) => ({ target_id: n, note: "quarterly maintenance" })));
  for (const name of names) await expect(page.locator(`[data-testid="schedule-row"][data-name="${name}"]`).getByTestId("schedule-paused-note")).toHaveText("paused: quarterly maintenance");
});

test("the schedules list filters by owner, from the URL too, and offers the bulk actions for an owner alone", async ({ page, request }) => {
  const mine = [`e2e-owner-a1-${suffix}`, `e2e-owner-a2-${suffix}`];
  const theirs = `e2e-owner-b-${suffix}`;
  for (const name of mine) expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 86_400, owner: `team-a-${suffix}` } })).status()).toBe(201);
  expect((await request.post("/api/schedules", { data: { name: theirs, handler: "noop", everySeconds: 86_400, owner: `team-b-${suffix}` } })).status()).toBe(201);

  await page.goto("/schedules");
  await expect(page.getByTestId("bulk-schedules")).toHaveCount(0);
  await page.getByTestId("schedule-owner-filter").fill(`team-a-${suffix}`);
  const rows = page.getByTestId("schedule-row");
  await expect(rows).toHaveCount(2);
  expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute("data-name")))).toEqual(mine);
  for (const row of await rows.all()) await expect(row.getByTestId("schedule-owner")).toHaveText(`owner: team-a-${suffix}`);
  await expect(page.getByTestId("bulk-pause")).toBeVisible();
  await page.getByTestId("bulk-pause").click();
  await expect(page.getByTestId("bulk-pause-count")).toHaveText("2 schedules match.");

  // A copied link opens the same filtered list.
  await page.goto(`/schedules?owner=team-b-${suffix}`);
  await expect(page.getByTestId("schedule-owner-filter")).toHaveValue(`team-b-${suffix}`);
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toHaveAttribute("data-name", theirs);
});

test("a pause with a resume time and no note reads 'paused until' that time on the list and the page", async ({ page, request, sql }) => {
  const name = `e2e-until-${suffix}`;
  expect((await request.post("/api/schedules", { data: { name, handler: "noop", everySeconds: 3600 } })).status()).toBe(201);
  const now = ((await sql.query("SELECT sk_now() AS now")).rows[0] as { now: Date }).now.getTime();
  const resumeAt = new Date(Math.ceil((now + 3 * 3600_000) / 60_000) * 60_000).toISOString();
  expect((await request.post(`/api/schedules/${name}/pause`, { data: { resumeAt } })).status()).toBe(200);
  expect((await sql.query("SELECT enabled, paused_note, resume_at FROM schedules WHERE name = $1", [name])).rows).toEqual([{ enabled: false, paused_note: null, resume_at: new Date(resumeAt) }]);

  await page.goto("/schedules");
  const listed = page.locator(`[data-testid="schedule-row"][data-name="${name}"]`).getByTestId("schedule-paused-note");
  await expect(listed).toHaveText(/^paused until [^:]+:\d\d:\d\d[^:]*$/); // the time, and no note after it
  await expect(listed.locator("time")).toHaveAttribute("datetime", resumeAt);

  await page.goto(`/schedules/${name}`);
  const notice = page.getByTestId("paused-note");
  await expect(notice).toContainText("Paused until");
  await expect(notice).toContainText("when a worker resumes it.");
  await expect(notice.locator("time")).toHaveAttribute("datetime", resumeAt);
});
