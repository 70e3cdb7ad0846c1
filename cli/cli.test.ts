// The `slotkeeper` CLI as a user runs it: a real child process (node --import tsx cli/main.ts, and
// once the package's bin, bin/slotkeeper.mjs)
// talking over real HTTP to a server on 127.0.0.1 whose handler forwards each request to the
// app's own route handlers, over a real test database. Answers are checked against the database,
// read directly with SQL.
import { execFile } from "node:child_process";
import { scryptSync } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchJson } from "@/lib/client/api";
import { createClient, SlotkeeperApiError } from "@/lib/client/slotkeeper-client";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

const ROOT = path.resolve(__dirname, "..");
type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const MODULES = import.meta.glob<Record<string, unknown>>("../app/api/**/route.ts", { eager: true });

/** Each route as a pattern over the path: `[name]` segments become captured parameters. */
const ROUTES = Object.entries(MODULES).map(([file, mod]) => {
  const route = file.slice("../app/api/".length, -"/route.ts".length);
  const keys: string[] = [];
  const pattern = route.replace(/\[(\w+)\]/g, (_m, k: string) => (keys.push(k), "([^/]+)"));
  return { re: new RegExp(`^/api/${pattern}$`), keys, mod, literal: keys.length === 0 };
});

const t = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
let server: http.Server;
let url = "";
const seenAuth: (string | undefined)[] = [];

beforeAll(async () => {
  server = http.createServer(async (req, res) => {
    seenAuth.push(req.headers.authorization);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const u = new URL(req.url ?? "/", url);
    // Literal routes first (runs/requeue before runs/[id]), as Next matches them.
    const hit = [...ROUTES].sort((a, b) => Number(b.literal) - Number(a.literal)).map((r) => ({ r, m: r.re.exec(u.pathname) })).find((x) => x.m);
    const handler = hit?.r.mod[req.method ?? "GET"] as Handler | undefined;
    if (!hit || !handler) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: `no route ${req.method} ${u.pathname}` } }));
      return;
    }
    const params = Object.fromEntries(hit.r.keys.map((k, i) => [k, hit.m![i + 1]]));
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
    const answer = await handler(new Request(u, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined }), { params: Promise.resolve(params) });
    res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

/** Run node with these arguments from the repository; resolves with its exit code and output (never rejects on a non-zero exit). */
function node(argv: string[], env: Record<string, string> = {}, stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SLOTKEEPER_")));
    const child = execFile(process.execPath, argv, { cwd: ROOT, env: { ...base, SLOTKEEPER_URL: url, ...env } as unknown as NodeJS.ProcessEnv, encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

/** The CLI's program (cli/main.ts) as `node --import tsx` runs it. */
const cli = (args: string[], env: Record<string, string> = {}, stdin = "") => node(["--import", "tsx", "cli/main.ts", ...args], env, stdin);
/** The package's bin, bin/slotkeeper.mjs, as npx runs it: no --import, the bin loads tsx and the source itself. */
const bin = (args: string[]) => node(["bin/slotkeeper.mjs", ...args]);

const q = async <T>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows as T[];

describe("slotkeeper CLI", () => {
  it("lists schedules as a table and as JSON that matches the database", async () => {
    await makeSchedule(t.db, { name: "nightly", cron: "0 2 * * *", everySeconds: null });
    await makeSchedule(t.db, { name: "often", everySeconds: 60, enabled: false });
    const human = await cli(["schedules", "list"]);
    expect(human.code, human.stderr).toBe(0);
    const lines = human.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+HANDLER\s+TIMING\s+STATUS\s+DEAD\s+NEXT SLOT$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual([
      ["nightly", "noop", "0 2 * * *", "healthy"],
      ["often", "noop", "every 60s", "paused"],
    ]);

    const json = await cli(["schedules", "list", "--json"]);
    expect(json.code).toBe(0);
    const rows = await q<{ name: string; enabled: boolean }>("SELECT name, enabled FROM schedules WHERE deleted_at IS NULL ORDER BY name");
    expect((JSON.parse(json.stdout) as { schedules: { name: string; enabled: boolean }[] }).schedules.map((s) => ({ name: s.name, enabled: s.enabled }))).toEqual(rows);
  });

  it("pauses, runs now and cancels, each change in the database", async () => {
    const paused = await cli(["--json", "schedules", "pause", "nightly"]);
    expect(paused.code, paused.stderr).toBe(0);
    expect((await q<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE name = 'nightly'"))[0].enabled).toBe(false);

    const now = await cli(["schedules", "run-now", "nightly", "--json"]);
    expect(now.code, now.stderr).toBe(0);
    const run = (JSON.parse(now.stdout) as { run: { id: number } }).run;
    expect(await q("SELECT origin::text, state::text FROM runs WHERE id = $1", [run.id])).toEqual([{ origin: "manual", state: "pending" }]);

    const withPayload = await cli(["--json", "schedules", "run-now", "nightly", "--payload", '{"full":true}']);
    expect(withPayload.code, withPayload.stderr).toBe(0);
    const own = (JSON.parse(withPayload.stdout) as { run: { id: number } }).run.id;
    expect(await q("SELECT payload_override FROM runs WHERE id = $1", [own])).toEqual([{ payload_override: { full: true } }]);
    expect((await cli(["schedules", "run-now", "nightly", "--payload", "[1]"])).code).toBe(2);

    const cancelled = await cli(["runs", "cancel", String(run.id), "--reason", "not today"]);
    expect(cancelled).toMatchObject({ code: 0, stdout: `run ${run.id} cancelled\n` });
    expect(await q("SELECT state::text, (SELECT count(*)::int FROM run_queue WHERE run_id = $1) AS queued FROM runs WHERE id = $1", [run.id])).toEqual([{ state: "skipped", queued: 0 }]);
    const entry = await q<{ action: string; after: { reason: string } }>("SELECT action, after FROM audit_log WHERE target_type = 'run' AND target_id = $1 AND action LIKE 'run.%' ORDER BY id", [String(run.id)]);
    expect(entry.map((e) => [e.action, e.after.reason])).toEqual([["run.cancel", "not today"]]);

    const got = await cli(["runs", "get", String(run.id), "--json"]);
    expect((JSON.parse(got.stdout) as { run: { state: string; skipReason: string } }).run).toMatchObject({ state: "skipped", skipReason: "cancelled" });
  });

  it("pauses with a note and a resume time, both stored; a resume time in the past is refused and changes nothing", async () => {
    await makeSchedule(t.db, { name: "held", everySeconds: 300 });
    const [{ now }] = await q<{ now: Date }>("SELECT sk_now() AS now");
    const resumeAt = new Date(now.getTime() + 2 * 3600_000).toISOString();
    const paused = await cli(["schedules", "pause", "held", "--note", "incident 42: upstream down", "--resume-at", resumeAt]);
    expect(paused, paused.stderr).toMatchObject({ code: 0, stdout: `paused held until ${resumeAt}: incident 42: upstream down\n` });
    const stored = () => q<{ enabled: boolean; paused_note: string | null; resume_at: Date | null }>("SELECT enabled, paused_note, resume_at FROM schedules WHERE name = 'held'");
    expect(await stored()).toEqual([{ enabled: false, paused_note: "incident 42: upstream down", resume_at: new Date(resumeAt) }]);

    const past = await cli(["schedules", "pause", "held", "--note", "other", "--resume-at", new Date(now.getTime() - 60_000).toISOString()]);
    expect(past.code).toBe(1);
    expect(past.stderr).toContain("(field: resumeAt)");
    expect(await stored()).toEqual([{ enabled: false, paused_note: "incident 42: upstream down", resume_at: new Date(resumeAt) }]);
  });

  it("exits 1 with the API's message and field when it refuses, 2 on a usage error", async () => {
    const again = await cli(["runs", "discard", "999999"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("run 999999 does not exist");

    const bad = await cli(["schedules", "backfill", "nightly", "--from", "yesterday", "--to", "2030-01-01T00:00:00Z"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("(field: from)");
    expect(bad.stderr).toContain("400 validation");

    const usage = await cli(["runs", "get", "abc"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("a run id is a positive integer");
    expect((await cli(["schedules", "frobnicate"])).code).toBe(2);
    expect((await cli(["schedules", "backfill", "nightly"])).code).toBe(2); // --from and --to are required
    expect((await cli(["--help"])).code).toBe(0);
  });

  it("the console's fetch and the typed client reject a refusal with the one SlotkeeperApiError, status, code and field", async () => {
    const range = { from: "yesterday", to: "2030-01-01T00:00:00Z" };
    const viaConsole: unknown = await fetchJson(`${url}/api/schedules/nightly/backfill`, { method: "POST", json: range }).catch((e: unknown) => e);
    const viaClient: unknown = await createClient({ url }).backfill("nightly", range).catch((e: unknown) => e);
    for (const err of [viaConsole, viaClient]) {
      expect(err).toBeInstanceOf(SlotkeeperApiError);
      expect(err).toMatchObject({ name: "SlotkeeperApiError", status: 400, code: "validation", field: "from" });
    }
  });

  it("plans, applies, re-applies and prunes a schedules file, and exports one that applies unchanged", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-cli-"));
    const file = path.join(dir, "jobs.yaml");
    const write = (names: string[], desc = "a job") =>
      fs.writeFileSync(file, `schedules:\n${names.map((n) => `  - name: ${n}\n    handler: noop\n    everySeconds: 300\n    description: ${desc}\n`).join("")}`);
    const live = () => q<{ name: string; managed_by: string | null; description: string | null; version: number }>("SELECT name, managed_by, description, version FROM schedules WHERE deleted_at IS NULL AND name LIKE 'file-%' ORDER BY name");
    write(["file-a", "file-b"]);

    const plan = await cli(["plan", file]);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toBe("+ file-a\n+ file-b\nplan: 2 to be created, 0 to be updated, 0 to be deleted, 0 unchanged; nothing changed\n");
    expect(await live()).toEqual([]);

    const applied = await cli(["apply", file, "--json"]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ created: ["file-a", "file-b"], updated: [], deleted: [], unchanged: [] });
    const first = await live();
    expect(first.map((r) => [r.name, r.managed_by, r.description])).toEqual([
      ["file-a", "jobs.yaml", "a job"],
      ["file-b", "jobs.yaml", "a job"],
    ]);

    // Unchanged: nothing is written, not even a version.
    const again = await cli(["apply", file, "--json"]);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: [], updated: [], unchanged: ["file-a", "file-b"] });
    expect(await live()).toEqual(first);

    // One edited, one dropped: without --prune the dropped one stays; with it, it goes.
    write(["file-a"], "a better job");
    const kept = await cli(["apply", file]);
    expect(kept.stdout).toBe(`~ file-a: description (version ${first[0].version})\napplied: 0 created, 1 updated, 0 deleted, 0 unchanged\n`);
    expect((await live()).map((r) => [r.name, r.description])).toEqual([
      ["file-a", "a better job"],
      ["file-b", "a job"],
    ]);
    const pruned = await cli(["--json", "apply", file, "--prune"]);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ deleted: ["file-b"], unchanged: ["file-a"] });
    expect((await live()).map((r) => r.name)).toEqual(["file-a"]);

    // An error in the file names the entry and field, and changes nothing.
    fs.writeFileSync(file, "schedules:\n  - name: file-c\n    handler: noop\n    everySeconds: -1\n");
    const bad = await cli(["apply", file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("(field: schedules[0].everySeconds)");
    expect((await live()).map((r) => r.name)).toEqual(["file-a"]);
    expect((await cli(["apply", path.join(dir, "missing.yaml")])).code).toBe(2);

    // Export: YAML and JSON; the exported file plans as all unchanged.
    for (const name of ["all.yaml", "all.json"]) {
      const out = path.join(dir, name);
      const ex = await cli(["export", "--file", out]);
      expect(ex.code, ex.stderr).toBe(0);
      const text = fs.readFileSync(out, "utf8");
      const names = (await q<{ name: string }>("SELECT name FROM schedules WHERE deleted_at IS NULL ORDER BY name")).map((r) => r.name);
      if (name.endsWith(".json")) expect((JSON.parse(text) as { schedules: { name: string }[] }).schedules.map((s) => s.name)).toEqual(names);
      else expect(text).toMatch(/^schedules:\n {2}- /);
      const replan = await cli(["--json", "plan", out, "--source", "jobs.yaml"]);
      expect(JSON.parse(replan.stdout)).toMatchObject({ created: [], updated: [], deleted: [], unchanged: names });
    }
    const stdout = await cli(["export"]);
    expect(stdout.stdout).toBe(fs.readFileSync(path.join(dir, "all.yaml"), "utf8"));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("adds and changes people and makes and revokes tokens, the password read from stdin", async () => {
    const added = await cli(["people", "add", "ada", "--role", "operator", "--display-name", "Ada L.", "--password-stdin"], {}, "a long enough password\n");
    expect(added, added.stderr).toMatchObject({ code: 0, stdout: "added ada (operator)\n" });
    const row = await q<{ role: string; display_name: string; hash: string }>("SELECT role, display_name, password_hash AS hash FROM people WHERE name = 'ada'");
    expect(row.map((r) => [r.role, r.display_name])).toEqual([["operator", "Ada L."]]);
    expect(row[0].hash).not.toContain("a long enough password");
    // The password was the first line on stdin: scrypt of it, with the stored parameters and salt, is the stored key.
    const [, n, r, p, salt, key] = row[0].hash.split("$");
    const derived = scryptSync("a long enough password", Buffer.from(salt, "base64url"), Buffer.from(key, "base64url").length, { N: Number(n), r: Number(r), p: Number(p), maxmem: 256 * 1024 * 1024 });
    expect(derived.toString("base64url")).toBe(key);

    expect((await cli(["people", "add", "bob", "--role", "viewer", "--password-stdin"], {}, "")).code).toBe(2);
    expect((await cli(["people", "add", "bob", "--role", "boss", "--password-stdin"], {}, "x")).code).toBe(2);
    const short = await cli(["people", "add", "bob", "--role", "viewer", "--password-stdin"], {}, "short\n");
    expect(short.code).toBe(1);
    expect(short.stderr).toContain("(field: password)");
    expect(await q("SELECT name FROM people WHERE name = 'bob'")).toEqual([]);

    const changed = await cli(["people", "set", "ada", "--role", "admin", "--disable"]);
    expect(changed, changed.stderr).toMatchObject({ code: 0, stdout: "changed ada (admin, disabled)\n" });
    expect(await q("SELECT role, disabled_at IS NOT NULL AS disabled FROM people WHERE name = 'ada'")).toEqual([{ role: "admin", disabled: true }]);
    expect(await q("SELECT count(*)::int AS n FROM sessions s JOIN people p ON p.id = s.person_id WHERE p.name = 'ada'")).toEqual([{ n: 0 }]);
    expect((await cli(["people", "set", "ada"])).code).toBe(2);
    const listed = await cli(["--json", "people", "list"]);
    expect((JSON.parse(listed.stdout) as { people: { name: string }[] }).people.map((p) => p.name)).toEqual(["ada"]);

    const made = await cli(["--json", "tokens", "create", "deploy-bot", "--scope", "operate", "--tag", "team-a", "--tag", "team-b"]);
    expect(made.code, made.stderr).toBe(0);
    const { token, tokenInfo } = JSON.parse(made.stdout) as { token: string; tokenInfo: { id: number } };
    expect(await q("SELECT name, scope, schedule_tags FROM api_tokens WHERE id = $1", [tokenInfo.id])).toEqual([{ name: "deploy-bot", scope: "operate", schedule_tags: ["team-a", "team-b"] }]);
    expect((await cli(["schedules", "list"], { SLOTKEEPER_TOKEN: token })).code).toBe(0); // a tag-restricted token may list schedules
    const revoked = await cli(["tokens", "revoke", String(tokenInfo.id)]);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked token ${tokenInfo.id} (deploy-bot)\n` });
    expect((await cli(["schedules", "list"], { SLOTKEEPER_TOKEN: token })).code).toBe(1);
    expect((await cli(["tokens", "revoke", "abc"])).code).toBe(2);
    const table = await cli(["tokens", "list"]);
    expect(table.stdout.split("\n").find((l) => l.includes("deploy-bot"))).toMatch(/revoked$/);
  });

  it("sends SLOTKEEPER_TOKEN as a bearer token, and the API acts as that token", async () => {
    const workers = await cli(["--json", "workers", "list"]);
    expect({ code: workers.code, body: JSON.parse(workers.stdout) }).toEqual({ code: 0, body: { workers: [] } });
    const tokens = (await import("../app/api/tokens/route")).POST as Handler;
    const res = await tokens(new Request("http://127.0.0.1/api/tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "cli", scope: "operate" }) }), { params: Promise.resolve({}) });
    const { token } = (await res.json()) as { token: string };
    const dead = (await makeRun(t.db, { scheduleId: (await q<{ id: number }>("SELECT id FROM schedules WHERE name = 'often'"))[0].id, state: "dead", attempts: 6 })).id;

    seenAuth.length = 0;
    const r = await cli(["runs", "discard", String(dead)], { SLOTKEEPER_TOKEN: token });
    expect(r.code, r.stderr).toBe(0);
    expect(seenAuth).toEqual([`Bearer ${token}`]);
    expect(await q("SELECT actor, actor_kind FROM audit_log WHERE action = 'run.discard' AND target_id = $1", [String(dead)])).toEqual([{ actor: "token:cli", actor_kind: "token" }]);

    const refused = await cli(["workers", "list"], { SLOTKEEPER_TOKEN: "skt_wrong" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401 unauthorized");
  });

  it("gets a schedule's definition and resumes it, clearing the note and resume time", async () => {
    const got = await cli(["schedules", "get", "held"]);
    expect(got.code, got.stderr).toBe(0);
    const [row] = await q<{ id: number; handler: string; paused_note: string; resume_at: Date; version: number }>("SELECT id, handler, paused_note, resume_at, version FROM schedules WHERE name = 'held'");
    const lines = Object.fromEntries(got.stdout.trim().split("\n").map((l) => [l.slice(0, l.indexOf(":")), l.slice(l.indexOf(":") + 1).trim()]));
    expect(lines).toMatchObject({ name: "held", handler: row.handler, timing: "every 300s", enabled: "false", "paused note": row.paused_note, "resumes at": row.resume_at.toISOString(), version: String(row.version) });
    const json = JSON.parse((await cli(["--json", "schedules", "get", "held"])).stdout) as { schedule: { id: number; pausedNote: string; resumeAt: string } };
    expect(json.schedule).toMatchObject({ id: row.id, pausedNote: row.paused_note, resumeAt: row.resume_at.toISOString() });

    const resumed = await cli(["schedules", "resume", "held"]);
    expect(resumed, resumed.stderr).toMatchObject({ code: 0, stdout: "resumed held\n" });
    expect(await q("SELECT enabled, paused_note, resume_at FROM schedules WHERE name = 'held'")).toEqual([{ enabled: true, paused_note: null, resume_at: null }]);
    expect(await q("SELECT actor FROM audit_log WHERE action = 'schedule.resume' AND target_id = 'held'")).toHaveLength(1);
    expect((await cli(["schedules", "get", "no-such-schedule"])).code).toBe(1);
  });

  it("backfills a range, lists its runs, re-queues a dead one, and deletes the schedule keeping its history", async () => {
    const filler = await makeSchedule(t.db, { name: "filler", everySeconds: 3600, enabled: false });
    const [{ now }] = await q<{ now: Date }>("SELECT sk_now() AS now");
    const hour = (n: number) => new Date((Math.floor(now.getTime() / 3600_000) + n) * 3600_000);
    const dead = await makeRun(t.db, { scheduleId: filler.id, scheduledFor: hour(-3), state: "dead", attempts: 3, lastError: "boom" });

    const filled = await cli(["schedules", "backfill", "filler", "--from", hour(-4).toISOString(), "--to", hour(-1).toISOString()]);
    expect(filled, filled.stderr).toMatchObject({ code: 0, stdout: "4 slots, 1 already had a run: created 3\n" });
    const runs = () => q<{ id: number; scheduled_for: Date; state: string; origin: string }>("SELECT id, scheduled_for, state::text, origin::text FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for DESC", [filler.id]);
    const made = await runs();
    expect(made.map((r) => [r.scheduled_for.toISOString(), r.state, r.origin])).toEqual([
      [hour(-1).toISOString(), "pending", "backfill"],
      [hour(-2).toISOString(), "pending", "backfill"],
      [hour(-3).toISOString(), "dead", "schedule"],
      [hour(-4).toISOString(), "pending", "backfill"],
    ]);

    const listed = await cli(["runs", "list", "--schedule", "filler"]);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trim().split("\n");
    expect(header).toMatch(/^\s*ID\s+SCHEDULE\s+SLOT\s+STATE\s+ORIGIN\s+ATTEMPTS\s+WORKER\s+NOTE$/);
    expect(rows.map((l) => l.trim().split(/\s+/).slice(0, 5))).toEqual(made.map((r) => [String(r.id), "filler", r.scheduled_for.toISOString(), r.state, r.origin]));
    const deadOnly = JSON.parse((await cli(["--json", "runs", "list", "--schedule", "filler", "--state", "dead"])).stdout) as { runs: { id: number }[] };
    expect(deadOnly.runs.map((r) => r.id)).toEqual([dead.id]);

    const requeued = await cli(["runs", "requeue", String(dead.id)]);
    expect(requeued, requeued.stderr).toMatchObject({ code: 0, stdout: `run ${dead.id} re-queued\n` });
    expect(await q("SELECT r.state::text, r.attempts, q.state::text AS queued FROM runs r JOIN run_queue q ON q.run_id = r.id WHERE r.id = $1", [dead.id])).toEqual([{ state: "pending", attempts: 3, queued: "pending" }]);
    const twice = await cli(["runs", "requeue", String(dead.id)]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain("409 conflict");

    const deleted = await cli(["schedules", "delete", "filler"]);
    expect(deleted, deleted.stderr).toMatchObject({ code: 0, stdout: "deleted filler (history kept)\n" });
    expect(await q("SELECT deleted_at IS NOT NULL AS deleted FROM schedules WHERE id = $1", [filler.id])).toEqual([{ deleted: true }]);
    // Every run is still there; the ones that were waiting are withdrawn as skipped (deleted).
    expect((await runs()).map((r) => [r.id, r.state])).toEqual(made.map((r) => [r.id, "skipped"]));
    const history = JSON.parse((await cli(["--json", "runs", "list", "--schedule", "filler"])).stdout) as { runs: { id: number }[] };
    expect(history.runs.map((r) => r.id)).toEqual(made.map((r) => r.id));
    expect((await cli(["runs", "get", String(dead.id)])).stdout).toMatch(/^schedule:\s+filler \(deleted\)$/m);
    expect((await cli(["schedules", "get", "filler"])).code).toBe(1);
  });

  it("makes a token that expires when asked, and tokens list shows when it was last used", async () => {
    const [{ now }] = await q<{ now: Date }>("SELECT sk_now() AS now");
    const expires = new Date(now.getTime() + 7 * 86400_000).toISOString();
    const made = await cli(["--json", "tokens", "create", "nightly-bot", "--scope", "read", "--expires", expires]);
    expect(made.code, made.stderr).toBe(0);
    const { token, tokenInfo } = JSON.parse(made.stdout) as { token: string; tokenInfo: { id: number } };
    const stored = () => q<{ expires_at: Date; last_used_at: Date | null }>("SELECT expires_at, last_used_at FROM api_tokens WHERE id = $1", [tokenInfo.id]);
    expect(await stored()).toEqual([{ expires_at: new Date(expires), last_used_at: null }]);

    /** The token's row of `tokens list`, cell by column (cells are cut at the next header's start). */
    const listedRow = async () => {
      const [header, ...lines] = (await cli(["tokens", "list"])).stdout.trimEnd().split("\n");
      const starts = ["NAME", "SCOPE", "TAGS", "EXPIRES", "LAST USED", "STATUS"].map((h) => header.indexOf(h));
      const line = lines.find((l) => l.slice(starts[0]).startsWith("nightly-bot "))!;
      return Object.fromEntries(["name", "scope", "tags", "expires", "lastUsed", "status"].map((k, i) => [k, line.slice(starts[i], starts[i + 1]).trim()]));
    };
    expect(await listedRow()).toEqual({ name: "nightly-bot", scope: "read", tags: "-", expires, lastUsed: "-", status: "active" });

    expect((await cli(["schedules", "list"], { SLOTKEEPER_TOKEN: token })).code).toBe(0);
    const [{ last_used_at }] = await stored();
    expect(last_used_at).not.toBeNull();
    expect(await listedRow()).toMatchObject({ expires, lastUsed: last_used_at!.toISOString(), status: "active" });
  });

  it("runs as the package's bin, bin/slotkeeper.mjs, with the same answers and exit codes", async () => {
    const got = await bin(["--json", "schedules", "get", "nightly"]);
    expect(got.code, got.stderr).toBe(0);
    const [row] = await q<{ id: number; enabled: boolean; version: number }>("SELECT id, enabled, version FROM schedules WHERE name = 'nightly'");
    expect((JSON.parse(got.stdout) as { schedule: unknown }).schedule).toMatchObject({ name: "nightly", ...row });
    const refused = await bin(["schedules", "get", "no-such-schedule"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("404 not_found");
    expect((await bin(["runs", "get", "abc"])).code).toBe(2);
  });
});
