// The console reading from a real streaming standby. A primary and an asynchronous standby of it
// (lib/testing/standby.ts) and a console of its own with DATABASE_READ_URL on the standby. With
// WAL replay paused on the standby, a change made through the API (on the primary) does not show
// on the schedule's page, the replica banner says how far behind the page is; a change made in the
// page shows at once (read-your-writes sends that browser's reads to the primary); once replay resumes
// the change shows and the banner goes; with the standby stopped the page reads the primary and
// the banner says the replica is unavailable.
import pg from "pg";
import { migrateDatabase } from "../lib/db/migrate";
import { startCluster, startStandby, type Cluster, type Standby } from "../lib/testing/standby";
import { expect, test } from "./fixtures";
import { startConsole } from "./stack";

let primary: Cluster;
let standby: Standby;
let web: Awaited<ReturnType<typeof startConsole>> | undefined;
const NAME = "replica-e2e";

test.beforeAll(async () => {
  test.setTimeout(240_000);
  primary = await startCluster({ fromPort: 59632, database: "slotkeeper" });
  await migrateDatabase(primary.url);
  standby = await startStandby(primary, { appName: "sk_replica_e2e", synchronous: false, fromPort: 59732 });
  web = await startConsole({ databaseUrl: primary.url, env: { DATABASE_READ_URL: standby.url, SLOTKEEPER_REPLICA_LAG_WARN_SECONDS: "1" } });
});

test.afterAll(async () => {
  await web?.stop();
  await standby?.stop();
  await primary?.stop();
});

async function api(path: string, method: string, body?: unknown) {
  const res = await fetch(`${web!.url}/api/${path}`, {
    method,
    headers: { origin: web!.url, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(res.status, `${method} ${path}`).toBeLessThan(300);
  return res.json();
}

async function onStandby<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: standby.url });
  await c.connect();
  try {
    return (await c.query<T>(text)).rows;
  } finally {
    await c.end();
  }
}

test("the console shows the standby's data and its lag, and falls back to the primary when the standby stops", async ({ page }) => {
  test.setTimeout(120_000);
  const created = (await api("schedules", "POST", { name: NAME, handler: "noop", everySeconds: 3600, description: "written first" })) as { schedule: { version: number } };
  await expect.poll(async () => (await onStandby<{ n: number }>(`SELECT count(*)::int AS n FROM schedules WHERE name = '${NAME}'`))[0].n).toBe(1);

  await page.goto(`${web!.url}/schedules/${NAME}`);
  await expect(page.getByRole("heading", { name: NAME })).toBeVisible();
  await expect(page.getByText("written first", { exact: true })).toBeVisible();
  await expect(page.getByTestId("replica-banner")).toHaveCount(0);

  await onStandby("SELECT pg_wal_replay_pause()");
  await api(`schedules/${NAME}`, "PATCH", { description: "written second", version: created.schedule.version });
  await page.reload();
  // The standby has not replayed the change: the page still shows the first description...
  await expect(page.getByText("written first", { exact: true })).toBeVisible();
  // ...and says it is behind once the lag passes the threshold (1 s here).
  await expect(page.getByTestId("replica-banner")).toContainText(/Read replica \d+s behind \(replay paused\)/, { timeout: 15_000 });
  await expect(page.getByText("written second", { exact: true })).toHaveCount(0);

  // Your own change shows at once: the pause's answer sets sk_wrote_lsn, so this browser's reads
  // go to the primary until the standby has replayed it, and there the API's change is too.
  await page.getByTestId("pause").click();
  await expect(page.getByTestId("resume")).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("resume")).toBeVisible();
  await expect(page.getByText("written second", { exact: true })).toBeVisible();
  expect((await page.context().cookies()).some((c) => c.name === "sk_wrote_lsn")).toBe(true);
  expect((await onStandby<{ enabled: boolean }>(`SELECT enabled FROM schedules WHERE name = '${NAME}'`))[0].enabled).toBe(true);

  await onStandby("SELECT pg_wal_replay_resume()");
  await expect(page.getByText("written second", { exact: true })).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("replica-banner")).toHaveCount(0, { timeout: 15_000 });

  standby.halt();
  await page.reload();
  await expect(page.getByText("written second", { exact: true })).toBeVisible();
  await expect(page.getByTestId("replica-banner")).toContainText("Read replica unavailable", { timeout: 15_000 });
});
