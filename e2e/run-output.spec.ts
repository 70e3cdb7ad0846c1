import { expect, test } from "./fixtures";

// What an attempt left, on the run page: a program's stdout and stderr (masked), a handler's
// ctx.log lines and result. The stack's worker runs programs (SLOTKEEPER_COMMANDS=/bin/sh).
const SUFFIX = Date.now().toString(36);

async function runNowAndWait(request: import("@playwright/test").APIRequestContext, name: string, state: string): Promise<number> {
  const res = await request.post(`/api/schedules/${encodeURIComponent(name)}/run-now`, { data: {} });
  expect(res.ok(), await res.text()).toBeTruthy();
  const id = (await res.json()).run.id as number;
  await expect.poll(async () => (await (await request.get(`/api/runs/${id}`)).json()).run.state, { timeout: 30_000 }).toBe(state);
  return id;
}

test("a command run's page shows its stdout and stderr, secrets masked, and why it went dead", async ({ page, request }) => {
  const name = `e2e-command-${SUFFIX}`;
  const created = await request.post("/api/schedules", {
    data: {
      name,
      handler: "command",
      everySeconds: 86_400,
      payload: { command: 'echo "hello from $SLOTKEEPER_SCHEDULE"; echo "API_TOKEN=$API_TOKEN"; echo "disk full" >&2; exit 3', shell: true, env: { API_TOKEN: "tok-e2e-5551" }, nonRetryableExitCodes: [3] },
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const id = await runNowAndWait(request, name, "dead");
  const api = (await (await request.get(`/api/runs/${id}`)).json()).run;
  expect(api.attemptsList[0].output).toEqual({ result: null, log: [], stdout: `hello from ${name}\nAPI_TOKEN=••••••••\n`, stderr: "disk full\n" });

  await page.goto(`/runs/${id}`);
  const attempt = page.getByTestId("attempt").first();
  await expect(attempt.getByTestId("attempt-stdout")).toHaveText(`hello from ${name}\nAPI_TOKEN=••••••••`);
  await expect(attempt.getByTestId("attempt-stderr")).toHaveText("disk full");
  await expect(attempt.getByTestId("attempt-error")).toContainText("exited with code 3");
  await expect(page.getByText("tok-e2e-5551")).toHaveCount(0);
  await page.screenshot({ path: "e2e/output/screenshots/run-output-command.png", fullPage: true });
});

test("a handler's ctx.log lines and its result are on the run page", async ({ page, request }) => {
  // sql-ledger logs ledger:write:applied through ctx.log and returns { writes }.
  const name = `e2e-ledger-output-${SUFFIX}`;
  const created = await request.post("/api/schedules", { data: { name, handler: "sql-ledger", everySeconds: 86_400 } });
  expect(created.status(), await created.text()).toBe(201);
  const id = await runNowAndWait(request, name, "done");
  await page.goto(`/runs/${id}`);
  const attempt = page.getByTestId("attempt").first();
  await expect(attempt.getByTestId("attempt-result")).toContainText('"writes": 1');
  const line = attempt.getByTestId("attempt-log-line");
  await expect(line).toHaveCount(1);
  await expect(line).toHaveAttribute("data-level", "info");
  await expect(line).toContainText("ledger:write:applied");
  await page.screenshot({ path: "e2e/output/screenshots/run-output-log.png", fullPage: true });
});

test("the Workers page says which workers run programs", async ({ page }) => {
  await page.goto("/workers");
  await expect(page.getByTestId("worker-row").filter({ has: page.getByTestId("worker-commands").filter({ hasText: "/bin/sh" }) }).first()).toBeVisible();
});
