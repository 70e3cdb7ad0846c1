// A client that is really elsewhere: its own network namespace, joined to this one by a veth pair
// with its own addresses (198.18.0.0/30, the benchmarking range, so it can be no real host), talks
// to the real console bound to 0.0.0.0. In loopback-only mode it is refused whatever it forges; in
// credentials mode it signs in as anyone would. Needs root (ip netns); CI and this machine run as
// root, and without it this test fails saying so rather than skipping.
import { execFileSync, spawnSync } from "node:child_process";
import pg from "pg";
import { expect, stackInfo, test } from "./fixtures";
import { startConsole } from "./stack";

test.describe.configure({ mode: "serial" });

const tag = `sk${process.pid % 100000}`;
const NS = `${tag}ns`;
const HOST_IF = `${tag}h`;
const NS_IF = `${tag}n`;
const HOST_ADDR = "198.18.0.1";
const NS_ADDR = "198.18.0.2";
const PASSWORD = "netns-operator-password";

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "pipe", "pipe"] }).toString();

/** Run `script` with node inside the namespace; it prints one JSON line, which is returned. */
function inNamespace<T>(script: string): T {
  const r = spawnSync("ip", ["netns", "exec", NS, process.execPath, "-e", script], { encoding: "utf8", timeout: 30_000 });
  if (r.status !== 0) throw new Error(`client in ${NS} failed: ${r.stderr || r.stdout}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!) as T;
}

type Answer = { status: number; body: string; setCookie?: string[] };

/** A node:http request from inside the namespace (node:http lets a client set Host, unlike fetch). */
function request(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Answer {
  return inNamespace<Answer>(`
    const http = require("node:http");
    const req = http.request(${JSON.stringify(url)}, { method: ${JSON.stringify(opts.method ?? "GET")}, headers: ${JSON.stringify(opts.headers ?? {})} }, (res) => {
      let body = "";
      res.on("data", (c) => (body += c));
      res.on("end", () => console.log(JSON.stringify({ status: res.statusCode, body: body.slice(0, 2000), setCookie: res.headers["set-cookie"] })));
    });
    req.on("error", (e) => { console.log(JSON.stringify({ status: 0, body: String(e) })); });
    req.end(${JSON.stringify(opts.body ?? "")});
  `);
}

test.beforeAll(() => {
  if (process.getuid?.() !== 0) {
    throw new Error("e2e/netns.spec.ts needs root: it creates a network namespace and a veth pair (`ip netns add`). Run the browser tests as root, as CI does.");
  }
  spawnSync("ip", ["netns", "del", NS]);
  spawnSync("ip", ["link", "del", HOST_IF]);
  ip("netns", "add", NS);
  ip("link", "add", HOST_IF, "type", "veth", "peer", "name", NS_IF);
  ip("link", "set", NS_IF, "netns", NS);
  ip("addr", "add", `${HOST_ADDR}/30`, "dev", HOST_IF);
  ip("link", "set", HOST_IF, "up");
  ip("netns", "exec", NS, "ip", "addr", "add", `${NS_ADDR}/30`, "dev", NS_IF);
  ip("netns", "exec", NS, "ip", "link", "set", NS_IF, "up");
  ip("netns", "exec", NS, "ip", "link", "set", "lo", "up");
});

test.afterAll(() => {
  spawnSync("ip", ["netns", "del", NS]);
  spawnSync("ip", ["link", "del", HOST_IF]);
});

test("loopback-only: a client from its own address is refused whatever headers it forges", async () => {
  test.setTimeout(150_000);
  const db = new pg.Pool({ connectionString: stackInfo().databaseUrl, max: 1 });
  const name = `netns-victim-${Date.now().toString(36)}`;
  await db.query("INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ($1, 'noop', 3600, sk_now(), 0)", [name]);
  const console_ = await startConsole({ databaseUrl: stackInfo().databaseUrl, hostname: "0.0.0.0" });
  try {
    const base = `http://${HOST_ADDR}:${console_.port}`;
    // The namespace reaches the console (liveness stays open to everyone)...
    expect(request(`${base}/api/health`).status).toBe(200);
    // ...and nothing else, however it dresses up.
    const forgeries: Record<string, string>[] = [
      {},
      { "x-forwarded-for": "127.0.0.1" },
      { "x-forwarded-for": "127.0.0.1", "x-forwarded-host": "localhost", "x-real-ip": "127.0.0.1" },
      { "x-slotkeeper-peer": "127.0.0.1", "x-slotkeeper-forwarded-for": "" },
      { host: "localhost" },
      { host: `127.0.0.1:${console_.port}`, "x-forwarded-for": "::1", "x-slotkeeper-peer": "::1" },
    ];
    for (const headers of forgeries) {
      const page = request(`${base}/`, { headers });
      expect(page.status, JSON.stringify(headers)).toBe(403);
      expect(page.body).toContain("SLOTKEEPER_OPERATOR_PASSWORD");
      expect(request(`${base}/api/schedules`, { headers }).status, JSON.stringify(headers)).toBe(403);
      const pause = request(`${base}/api/schedules/${name}/pause`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: "{}" });
      expect(pause.status, JSON.stringify(headers)).toBe(403);
    }
    const row = await db.query<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE name = $1", [name]);
    expect(row.rows[0].enabled).toBe(true);
    expect((await db.query("SELECT 1 FROM audit_log a JOIN schedules s ON s.id = a.schedule_id WHERE s.name = $1", [name])).rowCount).toBe(0);
  } finally {
    await console_.stop();
    await db.end();
  }
});

test("credentials mode: the same client signs in normally and uses the console", async () => {
  test.setTimeout(150_000);
  const console_ = await startConsole({ databaseUrl: stackInfo().databaseUrl, hostname: "0.0.0.0", env: { SLOTKEEPER_OPERATOR_PASSWORD: PASSWORD } });
  try {
    const base = `http://${HOST_ADDR}:${console_.port}`;
    expect(request(`${base}/api/me`).status).toBe(401);
    const wrong = request(`${base}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ user: "operator", password: "not-the-password" }) });
    expect(wrong.status).toBe(401);
    const login = request(`${base}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json", origin: base }, body: JSON.stringify({ user: "operator", password: PASSWORD }) });
    expect(login.status).toBe(200);
    const cookie = login.setCookie?.[0]?.split(";")[0];
    expect(cookie).toMatch(/^sk_session=/);
    const me = request(`${base}/api/me`, { headers: { cookie: cookie! } });
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body)).toMatchObject({ actor: { name: "operator", kind: "user", role: "admin" }, access: "credentials" });
    const page = request(`${base}/schedules`, { headers: { cookie: cookie! } });
    expect(page.status).toBe(200);
    expect(page.body).toContain("<html");
    // The sign-in is in the audit log, as every sign-in is.
    const db = new pg.Pool({ connectionString: stackInfo().databaseUrl, max: 1 });
    const audit = await db.query("SELECT 1 FROM audit_log WHERE action = 'auth.login' AND actor = 'operator'");
    expect(audit.rowCount).toBeGreaterThan(0);
    await db.end();
  } finally {
    await console_.stop();
  }
});
