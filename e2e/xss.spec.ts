// Every field a user or a handler fills, filled with the XSS corpus (e2e/xss-corpus.ts), then every
// page of the console visited in Chromium: the strings show as text, every response carries a
// Content-Security-Policy, the browser reports no CSP violation, and no payload ever runs (none
// sets window.__xss, no dialog opens). Run texts come from the fail handler's error, an http
// receiver's answer and a program's stdout and stderr; people's display names and tokens' names
// are shown on Settings and in the audit log, where each schedule's edit names the token that made it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { request as playwrightRequest, type APIResponse, type Page } from "@playwright/test";
import { expect, stackInfo, test } from "./fixtures";
import { XSS_NAMES, XSS_PAYLOADS } from "./xss-corpus";

test.describe.configure({ mode: "serial" });

const suffix = Date.now().toString(36);
const names = XSS_PAYLOADS.map((_p, i) => `xss-${i}-${suffix}`);
/** People's names must fit the name rule; their display names carry the payloads. */
const people = XSS_PAYLOADS.map((_p, i) => `xss-person-${i}-${suffix}`);
/** The handlers that fill a run's error and output in turn (the stack's workers may run /bin/sh). */
const KINDS = ["fail", "http", "command"] as const;
let runIds: number[] = [];
let receiver: http.Server;

async function created(res: APIResponse, what: string) {
  expect(res.status(), `${what}: ${await res.text()}`).toBe(201);
  return res.json();
}

test.beforeAll(async () => {
  test.setTimeout(240_000);
  const request = await playwrightRequest.newContext({ baseURL: stackInfo().baseURL });
  // A handler's error text comes from what it called: this receiver answers 400 with payload i.
  receiver = http.createServer((req, res) => res.writeHead(400, { "content-type": "text/html" }).end(XSS_PAYLOADS[Number(req.url?.slice(1)) || 0]));
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  for (const [i, p] of XSS_PAYLOADS.entries()) {
    // A name is refused unless it fits the name rule; either way the answer is a 400 naming the field or a 201.
    const asName = await request.post("/api/schedules", { data: { name: p, handler: "noop", everySeconds: 3600 } });
    if (asName.status() !== 201) expect(((await asName.json()) as { error: { field: string } }).error.field).toBe("name");
    // Who fills the run's texts: the fail handler's error, an http receiver's answer, or a program's output.
    const kind = KINDS[i % KINDS.length];
    const payload = {
      fail: { nonRetryable: true, message: p, note: p },
      http: { url: `${hook}/${i}`, method: "POST", body: { note: p } },
      command: { command: "/bin/sh", args: ["-c", 'printf "%s\\n" "$P"; printf "%s\\n" "$P" >&2; exit 3'], env: { P: p }, nonRetryableExitCodes: [3] },
    }[kind];
    await created(
      await request.post("/api/schedules", {
        data: {
          name: names[i],
          description: p,
          handler: kind,
          payload,
          everySeconds: 86_400,
          retry: { maxAttempts: 1, baseSeconds: 1, capSeconds: 1 },
        },
      }),
      names[i],
    );
    await created(await request.post("/api/alerts/channels", { data: { name: p.slice(0, 100), kind: "webhook", enabled: false, config: { url: "https://hooks.example.test/x" } } }), `channel ${i}`);
    // A token named with the payload makes the edit below, so the payload is also an actor's name.
    const { token } = (await created(await request.post("/api/tokens", { data: { name: p.slice(0, 100), scope: "operate" } }), `token ${i}`)) as { token: string };
    await created(
      await request.post("/api/people", { data: { name: people[i], displayName: p.slice(0, 100), role: "viewer", password: "xss-person-password-1" } }),
      `person ${i}`,
    );
    // An edit, so the audit log holds the payload in a before/after pair too.
    const edit = await request.patch(`/api/schedules/${names[i]}`, { data: { description: `${p} (edited)`, version: 1 }, headers: { authorization: `Bearer ${token}` } });
    expect(edit.ok(), await edit.text()).toBeTruthy();
  }
  for (const n of XSS_NAMES) await created(await request.post("/api/schedules", { data: { name: `${n} ${suffix}`, handler: "noop", everySeconds: 3600, description: n } }), n);
  for (const n of names) expect((await request.post(`/api/schedules/${n}/run-now`, { data: {} })).ok()).toBeTruthy();
  await expect(async () => {
    const ids: number[] = [];
    for (const n of names) {
      const runs = (await (await request.get(`/api/runs?state=dead&schedule=${n}`)).json()) as { runs: { id: number }[] };
      expect(runs.runs.length, n).toBe(1);
      ids.push(runs.runs[0].id);
    }
    runIds = ids;
  }).toPass({ timeout: 120_000 });
  await request.dispose();
});

test.afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** Watch a page for anything a payload could do, and for responses without a CSP. */
async function guard(page: Page) {
  const problems: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      (window as unknown as { __csp: string[] }).__csp = [...((window as unknown as { __csp?: string[] }).__csp ?? []), `${e.violatedDirective} ${e.blockedURI}`];
    });
  });
  page.on("dialog", (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.origin === new URL(page.url() || r.url()).origin && !r.headers()["content-security-policy"]) problems.push(`no CSP on ${u.pathname}`);
  });
  return async (where: string) => {
    // The page has rendered what the caller waited for; give its effects and late requests a moment to land.
    await page.waitForLoadState("load");
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 100))));
    const seen = await page.evaluate(() => ({ xss: (window as unknown as { __xss?: unknown }).__xss, csp: (window as unknown as { __csp?: string[] }).__csp ?? [] }));
    expect(seen.xss, `${where}: a payload ran`).toBeUndefined();
    expect(seen.csp, `${where}: CSP violations`).toEqual([]);
    expect(problems, where).toEqual([]);
  };
}

test("every list page renders the corpus as text, under a CSP, running nothing", async ({ page }) => {
  test.setTimeout(180_000);
  const check = await guard(page);
  for (const path of ["/", "/schedules", "/runs", "/runs?state=dead", "/audit", "/alerts", "/settings", "/workers"]) {
    const res = await page.goto(path);
    expect(res?.headers()["content-security-policy"], path).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'/);
    await check(path);
  }
  await page.goto("/alerts");
  for (const p of XSS_PAYLOADS) await expect(page.getByText(p.slice(0, 100), { exact: true }).first(), p).toBeAttached();
  await page.goto("/settings");
  for (const p of XSS_PAYLOADS) await expect(page.getByTestId("token-row-name").getByText(p.slice(0, 100), { exact: true }).first(), p).toBeAttached();
  for (const [i, p] of XSS_PAYLOADS.entries()) {
    const row = page.locator(`[data-testid="person-row"][data-name="${people[i]}"]`);
    await expect(row.getByTestId("person-row-display-name"), p).toHaveText(p.slice(0, 100));
  }
  await check("settings with people and tokens");
  await page.goto("/schedules");
  for (const n of XSS_NAMES) await expect(page.getByText(`${n} ${suffix}`, { exact: true }).first()).toBeVisible();
  // The newest entries are on the first page; JSON shows a quote or backslash escaped, so pick one without.
  const recent = [...XSS_PAYLOADS].reverse().find((p) => !/["\\]/.test(p))!;
  await page.goto("/audit");
  await expect(page.getByTestId("audit-after").filter({ hasText: recent }).first()).toBeVisible();
  // The people's display names, in their person.create entries (JSON escapes a quote or backslash).
  await page.getByTestId("audit-filter-action").fill("person.create");
  await page.getByTestId("audit-apply").click();
  await expect(page.getByTestId("audit-row").first()).toHaveAttribute("data-action", "person.create");
  for (const p of XSS_PAYLOADS.filter((q) => !/["\\]/.test(q))) await expect(page.getByTestId("audit-after").filter({ hasText: p }).first(), p).toBeVisible();
  await check("audit of people");
  await check("after the text checks");
});

for (const [i, p] of XSS_PAYLOADS.entries()) {
  test(`payload ${i}: its schedule, edit form and run page show it as text and run nothing`, async ({ page }) => {
    const check = await guard(page);
    await page.goto(`/schedules/${names[i]}`);
    await expect(page.getByText(`${p} (edited)`, { exact: true }).first(), `schedule ${i}`).toBeVisible();
    // The edit's audit entry names the token that made it: `token:<payload>`, as text.
    await expect(page.getByTestId("schedule-audit").getByTestId("audit-actor").filter({ hasText: `token:${p.slice(0, 100)}` }).first(), `actor ${i}`).toBeVisible();
    await check(`schedule ${i}`);
    await page.goto(`/schedules/${names[i]}/edit`);
    await expect(page.getByTestId("input-payload")).toHaveValue(new RegExp({ fail: '"message"', http: '"url"', command: '"command"' }[KINDS[i % KINDS.length]]));
    await check(`edit ${i}`);
    await page.goto(`/runs/${runIds[i]}`);
    if (KINDS[i % KINDS.length] === "command") await expect(page.getByTestId("attempt-output").first(), `run ${i}`).toContainText(p.slice(0, 60));
    else await expect(page.getByTestId("attempt-error").first(), `run ${i}`).toContainText(p.slice(0, 60));
    await check(`run ${i}`);
  });
}
