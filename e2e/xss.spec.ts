// Every field a user or a handler fills, filled with the XSS corpus (e2e/xss-corpus.ts), then every
// page of the console visited in Chromium: the strings show as text, every response carries a
// Content-Security-Policy, the browser reports no CSP violation, and no payload ever runs (none
// sets window.__xss, no dialog opens). Run texts come from the fail handler's error, an http
// receiver's answer and a program's stdout and stderr; people's display names and tokens' names
// are shown on Settings and in the audit log, where each schedule's edit names the token that made it.
// Each payload's schedule also comes from a schedules file whose source is the payload (the
// "managed by" badge), names it as its owner, is paused with it as the note, and runs once with a
// payload of the run's own that holds it, a run then discarded with it as the reason; a schedule no
// worker serves gets a run per payload, cancelled with the payload as the reason. The new-schedule
// form takes the corpus typed in, and the sign-in page of a console with passwords takes it as
// `next` (where sign-in goes afterwards).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { request as playwrightRequest, type APIResponse, type Page } from "@playwright/test";
import { expect, stackInfo, test } from "./fixtures";
import { ScheduleFormPage } from "./pages/schedule-form";
import { useSecuredConsole } from "./secured-console";
import { XSS_NAMES, XSS_PAYLOADS } from "./xss-corpus";

test.describe.configure({ mode: "serial" });

const OPERATOR_PASSWORD = "e2e-xss-operator-password";
const securedConsole = useSecuredConsole({ SLOTKEEPER_OPERATOR_PASSWORD: OPERATOR_PASSWORD });

const suffix = Date.now().toString(36);
const names = XSS_PAYLOADS.map((_p, i) => `xss-${i}-${suffix}`);
/** People's names must fit the name rule; their display names carry the payloads. */
const people = XSS_PAYLOADS.map((_p, i) => `xss-person-${i}-${suffix}`);
/** The handlers that fill a run's error and output in turn (the stack's workers may run /bin/sh). */
const KINDS = ["fail", "http", "command"] as const;
/** Payload i's runs: one with its schedule's payload (dead), one given a payload of its own (dead, then discarded). */
let runIds: number[] = [];
let ownPayloadRunIds: number[] = [];
let receiver: http.Server;
/** Served by no worker, so its manual runs stay pending until cancelled (one per payload, the payload the reason). */
const unserved = `xss-unserved-${suffix}`;
/** The audit actions whose entries hold a payload as a pause note or a cancel or discard reason. */
const REASON_ACTIONS = ["schedule.pause", "run.discard", "run.cancel"] as const;

async function created(res: APIResponse, what: string) {
  expect(res.status(), `${what}: ${await res.text()}`).toBe(201);
  return res.json();
}

async function succeeded(res: APIResponse, what: string) {
  expect(res.status(), `${what}: ${await res.text()}`).toBe(200);
  return res.json();
}

/** A string as the audit log's JSON snapshots show it (quotes and backslashes escaped). */
const asJson = (p: string) => JSON.stringify(p);

test.beforeAll(async () => {
  test.setTimeout(240_000);
  const request = await playwrightRequest.newContext({ baseURL: stackInfo().baseURL });
  // A handler's error text comes from what it called: this receiver answers 400 with payload i.
  receiver = http.createServer((req, res) => res.writeHead(400, { "content-type": "text/html" }).end(XSS_PAYLOADS[Number(req.url?.slice(1)) || 0]));
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const payloads: Record<string, unknown>[] = [];

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
    payloads.push(payload);
    // Applied from a schedules file whose source is the payload: its "managed by" badge.
    const schedule = { name: names[i], description: p, owner: p, handler: kind, payload, everySeconds: 86_400, retry: { maxAttempts: 1, baseSeconds: 1, capSeconds: 1 } };
    const applied = (await succeeded(await request.post("/api/apply", { data: { source: p, schedules: [schedule] } }), `apply ${i}`)) as { created: string[] };
    expect(applied.created, `apply ${i}`).toEqual([names[i]]);
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
  // Each schedule runs twice by hand: with its own payload, and with the same payload given to the run (shown as the run's own).
  type RunNow = { run: { id: number } };
  for (const [i, n] of names.entries()) {
    runIds.push(((await succeeded(await request.post(`/api/schedules/${n}/run-now`, { data: {} }), `run-now ${i}`)) as RunNow).run.id);
    ownPayloadRunIds.push(((await succeeded(await request.post(`/api/schedules/${n}/run-now`, { data: { payload: payloads[i] } }), `run-now with a payload ${i}`)) as RunNow).run.id);
  }
  await expect(async () => {
    for (const [i, n] of names.entries()) {
      const runs = (await (await request.get(`/api/runs?state=dead&schedule=${n}`)).json()) as { runs: { id: number }[] };
      expect(runs.runs.map((r) => r.id).sort((a, b) => a - b), n).toEqual([runIds[i], ownPayloadRunIds[i]]);
    }
  }).toPass({ timeout: 120_000 });
  // The payload as a discard reason and a pause note; the dead run with the schedule's payload stays for the run lists.
  for (const [i, p] of XSS_PAYLOADS.entries()) {
    await succeeded(await request.post(`/api/runs/${ownPayloadRunIds[i]}/discard`, { data: { reason: p } }), `discard ${i}`);
    await succeeded(await request.post(`/api/schedules/${names[i]}/pause`, { data: { note: p } }), `pause ${i}`);
  }
  // The payload as a cancel reason, on runs no worker takes.
  await created(await request.post("/api/schedules", { data: { name: unserved, handler: "xss-served-by-nobody", everySeconds: 86_400, enabled: false } }), unserved);
  for (const [i, p] of XSS_PAYLOADS.entries()) {
    const { run } = (await succeeded(await request.post(`/api/schedules/${unserved}/run-now`, { data: {} }), `run-now ${unserved}`)) as RunNow;
    await succeeded(await request.post(`/api/runs/${run.id}/cancel`, { data: { reason: p } }), `cancel ${i}`);
  }
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
  for (const path of ["/", "/schedules", "/schedules/new", "/runs", "/runs?state=dead", "/audit", "/alerts", "/settings", "/workers", "/login"]) {
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
  // Every payload's row: its owner, its pause note and the file it is managed by.
  await page.goto(`/schedules?search=${suffix}`);
  for (const [i, p] of XSS_PAYLOADS.entries()) {
    const row = page.locator(`[data-testid="schedule-row"][data-name="${names[i]}"]`);
    await expect(row.getByTestId("schedule-owner"), `owner ${i}`).toHaveText(`owner: ${p}`);
    await expect(row.getByTestId("schedule-paused-note"), `note ${i}`).toContainText(`paused: ${p}`);
    await expect(row.getByTestId("managed-by"), `source ${i}`).toHaveText(`managed by ${p}`);
  }
  await check("schedules with owners, notes and sources");
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
  // Pause notes and the reasons runs were cancelled or discarded for, in their entries.
  for (const action of REASON_ACTIONS) {
    await page.getByTestId("audit-filter-action").fill(action);
    await page.getByTestId("audit-apply").click();
    const rows = page.locator(`[data-testid="audit-row"][data-action="${action}"]`);
    for (const p of XSS_PAYLOADS) await expect(rows.getByTestId("audit-after").filter({ hasText: asJson(p) }).first(), `${action} ${p}`).toBeVisible();
    await check(`audit of ${action}`);
  }
  await check("after the text checks");
});

test("the new-schedule form and the sign-in page take the corpus as input and show it as text", async ({ page }) => {
  test.setTimeout(120_000);
  const check = await guard(page);
  const form = new ScheduleFormPage(page);
  await form.gotoNew();
  // Typed into every text field; the field errors (some quote what was typed) render as text, and nothing is saved.
  for (const p of XSS_PAYLOADS) {
    for (const field of ["name", "tags", "owner", "cron", "timezone"]) await form.input(field).fill(p);
    await form.input("payload").fill(JSON.stringify({ note: p }));
    await form.save();
    await expect(form.error("name"), p).toBeVisible();
  }
  await expect(page).toHaveURL(/\/schedules\/new$/);
  await check("new schedule typed with the corpus");

  // `next` is where sign-in goes afterwards: shown nowhere, followed only when it is a path of this console.
  for (const [i, p] of XSS_PAYLOADS.entries()) {
    const res = await page.goto(`${securedConsole.url()}/login?next=${encodeURIComponent(p)}`);
    expect(res?.headers()["content-security-policy"], `login ${i}`).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'/);
    await expect(page.getByTestId("login-form")).toBeVisible();
    await check(`login ?next= payload ${i}`);
  }
  // A URL of another scheme as `next` (javascript:, data:) lands on the console's front page after sign-in.
  for (const p of XSS_PAYLOADS.filter((q) => /^[a-z]+:/i.test(q))) {
    await page.context().clearCookies();
    await page.goto(`${securedConsole.url()}/login?next=${encodeURIComponent(p)}`);
    await page.getByTestId("login-password").fill(OPERATOR_PASSWORD);
    await page.getByTestId("login-submit").click();
    await expect(page.getByTestId("session-user")).toHaveText("operator");
    expect(new URL(page.url()).pathname, p).toBe("/");
    await check(`signed in with next=${p}`);
  }
});

for (const [i, p] of XSS_PAYLOADS.entries()) {
  test(`payload ${i}: its schedule, edit form and run page show it as text and run nothing`, async ({ page }) => {
    const check = await guard(page);
    await page.goto(`/schedules/${names[i]}`);
    await expect(page.getByText(`${p} (edited)`, { exact: true }).first(), `schedule ${i}`).toBeVisible();
    // The edit's audit entry names the token that made it: `token:<payload>`, as text.
    await expect(page.getByTestId("schedule-audit").getByTestId("audit-actor").filter({ hasText: `token:${p.slice(0, 100)}` }).first(), `actor ${i}`).toBeVisible();
    await expect(page.getByTestId("config-owner"), `owner ${i}`).toHaveText(p);
    await expect(page.getByTestId("paused-note"), `note ${i}`).toContainText(`“${p}”`);
    await expect(page.getByTestId("managed-notice").getByTestId("managed-by"), `source ${i}`).toHaveText(p);
    // The note, the discard reason and the run's own payload in this schedule's audit entries.
    for (const action of ["schedule.pause", "run.discard", "schedule.run_now"]) {
      const entry = page.getByTestId("schedule-audit").locator(`[data-testid="audit-row"][data-action="${action}"]`);
      await expect(entry.getByTestId("audit-after").filter({ hasText: asJson(p) }).first(), `${action} ${i}`).toBeVisible();
    }
    await check(`schedule ${i}`);
    await page.goto(`/schedules/${names[i]}/edit`);
    await expect(page.getByTestId("input-payload")).toHaveValue(new RegExp({ fail: '"message"', http: '"url"', command: '"command"' }[KINDS[i % KINDS.length]]));
    await expect(page.getByTestId("input-owner"), `owner ${i}`).toHaveValue(p);
    await check(`edit ${i}`);
    await page.goto(`/runs/${runIds[i]}`);
    if (KINDS[i % KINDS.length] === "command") await expect(page.getByTestId("attempt-output").first(), `run ${i}`).toContainText(p.slice(0, 60));
    else await expect(page.getByTestId("attempt-error").first(), `run ${i}`).toContainText(p.slice(0, 60));
    await check(`run ${i}`);
    await page.goto(`/runs/${ownPayloadRunIds[i]}`);
    await expect(page.getByTestId("run-payload-override"), `run's own payload ${i}`).toContainText(asJson(p));
    await expect(page.getByTestId("run-summary")).toContainText("discarded by an operator");
    await check(`run with its own payload ${i}`);
  });
}
