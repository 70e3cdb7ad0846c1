// Settings → API tokens in the browser (the loopback operator is the admin here), and the schedule
// form's outbound-policy warning beside the payload.
import { expect, test } from "./fixtures";
import { ScheduleFormPage } from "./pages/schedule-form";

const suffix = Date.now().toString(36);

test("an admin creates a scoped, tag-restricted, expiring token, sees its secret once, and revokes it", async ({ page, request, sql }) => {
  const name = `ci-bot-${suffix}`;
  await page.goto("/settings");
  await page.getByTestId("token-name").fill(name);
  await page.getByTestId("token-scope").selectOption("operate");
  await page.getByTestId("token-expires").fill("2099-12-31T23:59");
  await page.getByTestId("token-tags").fill("billing, eu");
  await page.getByTestId("token-create").click();
  const secret = (await page.getByTestId("token-secret").textContent())!;
  expect(secret).toMatch(/^skt_/);
  const row = page.getByTestId("token-row").filter({ hasText: name });
  await expect(row.getByTestId("token-row-scope")).toHaveText("operate");
  await expect(row.getByTestId("token-row-tags")).toHaveText("tagged billing, eu");
  await expect(row.getByTestId("token-row-status")).toHaveText("active");

  const stored = await sql.query<{ scope: string; schedule_tags: string[]; expires_at: Date }>("SELECT scope, schedule_tags, expires_at FROM api_tokens WHERE name = $1", [name]);
  expect(stored.rows[0]).toMatchObject({ scope: "operate", schedule_tags: ["billing", "eu"] });
  expect(stored.rows[0].expires_at.getUTCFullYear()).toBe(2099);

  // It works (from the API), its use shows up, and after a reload the secret is nowhere on the page.
  const me = await request.get("/api/me", { headers: { authorization: `Bearer ${secret}` } });
  expect(await me.json()).toMatchObject({ actor: { kind: "token", scope: "operate", scheduleTags: ["billing", "eu"] } });
  await page.reload();
  await expect(page.getByTestId("token-secret")).toHaveCount(0);
  expect(await page.content()).not.toContain(secret);
  await expect(row.getByTestId("token-row-last-used")).not.toHaveText("never");

  page.once("dialog", (d) => void d.accept());
  await row.getByTestId("token-revoke").click();
  await expect(row.getByTestId("token-row-status")).toHaveText("revoked");
  expect((await request.get("/api/me", { headers: { authorization: `Bearer ${secret}` } })).status()).toBe(401);
});

test("saving an http schedule whose URL the outbound policy refuses shows the warning beside the payload", async ({ page, sql }) => {
  const name = `metadata-${suffix}`;
  const form = new ScheduleFormPage(page);
  await form.gotoNew();
  await form.input("name").fill(name);
  await form.input("handler").selectOption("http");
  await form.input("payload").fill(JSON.stringify({ url: "http://169.254.169.254/latest/meta-data/" }));
  await form.useInterval(86_400);
  await form.input("enabled").uncheck();
  await form.save();
  await expect(page.getByTestId("saved-with-warnings")).toBeVisible();
  await expect(page.getByTestId("warning-payload")).toContainText("169.254.169.254 is a link-local address");
  await expect(page.getByTestId("warning-payload")).toContainText("SLOTKEEPER_OUTBOUND_ALLOW");
  expect((await sql.query("SELECT 1 FROM schedules WHERE name = $1", [name])).rowCount).toBe(1);
  await page.screenshot({ path: "e2e/output/screenshots/outbound-warning.png", fullPage: true });
  // Saving again edits the saved schedule (no duplicate, no conflict) and, with a public URL, moves on.
  await form.input("payload").fill(JSON.stringify({ url: "https://93.184.215.14/x" }));
  await form.save();
  await expect(page).toHaveURL(new RegExp(`/schedules/${name}$`));
});
