import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "./fixtures";

// Channel → Send test → a schedule goes late → the worker alerts → the history shows the delivery.
test.describe.configure({ mode: "serial" });

const SUFFIX = Date.now().toString(36);
const CHANNEL = `e2e-hook-${SUFFIX}`;
const SCHEDULE = `e2e-silent-${SUFFIX}`;
const received: { kind: string; schedule: { name: string } }[] = [];
let server: http.Server;
let hookUrl: string;

test.beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      received.push(JSON.parse(body));
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  hookUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
test.afterAll(async () => {
  await new Promise((r) => server.close(r));
});

test("add a webhook channel and send a test notification", async ({ page }) => {
  await page.goto("/");
  await page.getByTestId("nav-alerts").click();
  await expect(page.getByRole("heading", { name: "Alerts" })).toBeVisible();
  const form = page.getByTestId("channel-form");
  await form.getByLabel("Name").fill(CHANNEL);
  await form.getByLabel("URL").fill("not a url");
  await page.getByTestId("channel-add").click();
  await expect(page.getByTestId("error-channel-target")).toContainText("URL");
  await form.getByLabel("URL").fill(hookUrl);
  await page.getByTestId("channel-add").click();
  const row = page.getByTestId("channel-row").filter({ hasText: CHANNEL });
  await expect(row).toBeVisible();

  await row.getByTestId("channel-test").click();
  await expect(row.getByTestId("channel-test-result")).toHaveText("Test sent: the receiver accepted it.");
  expect(received.filter((b) => b.kind === "test")).toHaveLength(1);

  // Edit the URL in place; the row shows the new one after saving.
  await row.getByTestId("channel-edit").click();
  const edit = page.getByTestId("channel-edit-form");
  await edit.getByLabel("URL").fill(`${hookUrl}?edited=1`);
  await edit.getByTestId("channel-save").click();
  await expect(edit).toBeHidden();
  await expect(row).toContainText(`${hookUrl}?edited=1`);
  await page.screenshot({ path: "e2e/output/screenshots/alerts-channels.png", fullPage: true });
});

test("a schedule that never succeeded goes late: the worker alerts once and the history shows the delivery", async ({ page, sql }) => {
  // Workers evaluate every 15 s (the default); on a loaded CI machine the first pass can take longer.
  test.setTimeout(150_000);
  // Created an hour ago, never run (its next slot is tomorrow): late by the never-succeeded rule.
  await sql.query(
    `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition, created_at)
     VALUES ($1, 'noop', 300, sk_now() + interval '1 day', 0, sk_now() - interval '1 hour')`,
    [SCHEDULE],
  );
  await page.goto("/alerts");
  await page.getByLabel("Schedule", { exact: true }).fill(SCHEDULE);
  const event = page.getByTestId("alert-event").filter({ hasText: SCHEDULE });
  await expect(event).toBeVisible({ timeout: 90_000 });
  await expect(event.getByTestId("alert-kind")).toHaveText("firing");
  await expect(event).toContainText("late");
  await expect(event.getByTestId("alert-delivery").filter({ hasText: CHANNEL })).toContainText("delivered", { timeout: 30_000 });
  await expect(page.getByTestId("alert-firing").filter({ hasText: SCHEDULE })).toBeVisible();
  const firing = received.filter((b) => b.kind === "firing" && b.schedule.name === SCHEDULE);
  expect(firing).toHaveLength(1);
  await page.screenshot({ path: "e2e/output/screenshots/alerts-history.png", fullPage: true });
});
