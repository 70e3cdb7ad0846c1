// The `slotkeeper` CLI as a user runs it: a real child process (node --import tsx cli/main.ts)
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

/** Run the CLI; resolves with its exit code and output (never rejects on a non-zero exit). */
function cli(args: string[], env: Record<string, string> = {}, stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SLOTKEEPER_")));
    const child = execFile(process.execPath, ["--import", "tsx", "cli/main.ts", ...args], { cwd: ROOT, env: { ...base, SLOTKEEPER_URL: url, ...env } as unknown as NodeJS.ProcessEnv, encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
    child.stdin?.end(stdin);
  });
}

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
});
