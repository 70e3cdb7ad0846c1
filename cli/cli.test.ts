// The `slotkeeper` CLI as a user runs it: a real child process (node --import tsx cli/main.ts)
// talking over real HTTP to a server on 127.0.0.1 whose handler forwards each request to the
// app's own route handlers, over a real test database. Answers are checked against the database,
// read directly with SQL.
import { execFile } from "node:child_process";
import http from "node:http";
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
function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SLOTKEEPER_")));
    execFile(process.execPath, ["--import", "tsx", "cli/main.ts", ...args], { cwd: ROOT, env: { ...base, SLOTKEEPER_URL: url, ...env } as unknown as NodeJS.ProcessEnv, encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr });
    });
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

    const cancelled = await cli(["runs", "cancel", String(run.id), "--reason", "not today"]);
    expect(cancelled).toMatchObject({ code: 0, stdout: `run ${run.id} cancelled\n` });
    expect(await q("SELECT state::text, (SELECT count(*)::int FROM run_queue WHERE run_id = $1) AS queued FROM runs WHERE id = $1", [run.id])).toEqual([{ state: "skipped", queued: 0 }]);
    const entry = await q<{ action: string; after: { reason: string } }>("SELECT action, after FROM audit_log WHERE target_type = 'run' AND target_id = $1 AND action LIKE 'run.%' ORDER BY id", [String(run.id)]);
    expect(entry.map((e) => [e.action, e.after.reason])).toEqual([["run.cancel", "not today"]]);

    const got = await cli(["runs", "get", String(run.id), "--json"]);
    expect((JSON.parse(got.stdout) as { run: { state: string; skipReason: string } }).run).toMatchObject({ state: "skipped", skipReason: "cancelled" });
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
