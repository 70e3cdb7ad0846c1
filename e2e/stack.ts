// Starts what the browser tests need: a fresh database (a new one on DATABASE_URL's server, or an
// embedded throwaway cluster), migrations, the built console and one fast-polling worker.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { portIsFree, startEmbeddedPostgres, type EmbeddedDatabase } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";
import { workerNodeArgs } from "../worker/node-flags";

export const STACK_FILE = path.resolve("e2e/output/stack.json");

export type StackInfo = { baseURL: string; databaseUrl: string };

export async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 500; p++) if (await portIsFree(p)) return p;
  throw new Error("no free port");
}

export type Stack = StackInfo & { startWorker: () => ChildProcess; stop: () => Promise<void> };

/** Environment the stack's processes get on top of this one's; a value of "" unsets a variable. */
export type StackEnv = Record<string, string>;

/**
 * `next start` on `port`. Idle connections stay open for ten minutes: Node closes a keep-alive
 * socket after 5 s idle by default, and a test's API request that reuses the socket just as the
 * server closes it fails with ECONNRESET (Playwright's request context keeps its sockets across a
 * test's page navigations). The stack's stop does not wait for idle sockets (SIGKILL after 5 s).
 */
function nextStart(port: number, hostname?: string): string[] {
  return [require.resolve("next/dist/bin/next"), "start", "-p", String(port), "--keepAliveTimeout", "600000", ...(hostname ? ["-H", hostname] : [])];
}

/** A console (`next start`) of its own on an existing database: `env` on top of this process's, bound to `hostname`. */
export async function startConsole(opts: { databaseUrl: string; env?: StackEnv; hostname?: string; port?: number }): Promise<{ url: string; port: number; process: ChildProcess; stop: () => Promise<void> }> {
  const port = opts.port ?? (await freePort(3400));
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: opts.databaseUrl, PORT: String(port), LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn", ...opts.env };
  for (const [k, v] of Object.entries(env)) if (v === "") delete env[k];
  const web = spawn(process.execPath, nextStart(port, opts.hostname), { env, stdio: ["ignore", "inherit", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (web.exitCode !== null) throw new Error("the console exited during start (is there a build? run `npm run build`)");
    if (await fetch(`${url}/api/health`).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) throw new Error("the console did not become healthy in 90s");
    await new Promise((r) => setTimeout(r, 250));
  }
  // next start's graceful stop waits for every open connection, and a browser's keep-alive socket
  // can hold it for minutes: SIGKILL after 5 s. The test is over; what it checked is in the database.
  const stop = async () => {
    if (web.exitCode !== null || web.signalCode !== null) return;
    const exited = new Promise((r) => web.once("exit", r));
    web.kill("SIGTERM");
    const timer = setTimeout(() => web.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  };
  return { url, port, process: web, stop };
}

/**
 * A worker that serves only the custom handlers named in `handlers`, no built-ins
 * (lib/testing/handler-worker.ts), on `databaseUrl`: each handler POSTs { handler, workerId, runId }
 * to `receiver`, the witness outside the product of which process ran which run.
 */
export function startHandlerWorker(opts: { databaseUrl: string; id: string; handlers: string[]; receiver: string }): { process: ChildProcess; stop: () => Promise<void> } {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: opts.databaseUrl,
    SLOTKEEPER_WORKER_ID: opts.id,
    SLOTKEEPER_POLL_INTERVAL_MS: "250",
    SK_TEST_HANDLERS: opts.handlers.join(","),
    SK_TEST_RECEIVER: opts.receiver,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn",
  };
  const w = spawn(process.execPath, ["--import", "tsx", "lib/testing/handler-worker.ts"], { env, stdio: ["ignore", "inherit", "inherit"] });
  const stop = async () => {
    if (w.exitCode !== null || w.signalCode !== null) return;
    const exited = new Promise((r) => w.once("exit", r));
    w.kill("SIGTERM");
    await exited;
  };
  return { process: w, stop };
}

/**
 * `env`: settings for the console and workers of this stack on top of the environment (alert
 * interval, …; a value of "" unsets a variable: `{ SLOTKEEPER_OUTBOUND_ALLOW: "" }` is a default
 * install). `workers`: how many default workers (`worker/main.ts`) start beside the console; 1
 * unless told.
 */
export type StackOptions = { env?: StackEnv; workers?: number };

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  if (process.env.DATABASE_URL) {
    const name = `sk_e2e_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(process.env.DATABASE_URL);
    u.pathname = `/${name}`;
    databaseUrl = u.toString();
    dropDatabase = async () => {
      const a = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    };
  } else {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-e2e-"));
    fs.chmodSync(dir, 0o755);
    embedded = await startEmbeddedPostgres({ dir, port: await freePort(56432), ephemeral: true });
    databaseUrl = embedded.url;
  }
  await migrateDatabase(databaseUrl);

  const port = await freePort(3100);
  const env = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    SLOTKEEPER_POLL_INTERVAL_MS: "250",
    // The specs' receivers listen on loopback, which the outbound address policy refuses unless opened.
    SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1,::1,localhost",
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "warn",
    ...opts.env,
  };
  for (const [k, v] of Object.entries(env)) if (v === "") delete (env as Record<string, string | undefined>)[k];
  const children: ChildProcess[] = [];
  const web = spawn(process.execPath, nextStart(port), { env, stdio: ["ignore", "inherit", "inherit"] });
  children.push(web);
  const startWorker = () => {
    // Its workers run programs, for the `command` handler's tests: /bin/sh only.
    const w = spawn(process.execPath, workerNodeArgs(), { env: { ...env, SLOTKEEPER_COMMANDS: "/bin/sh" }, stdio: ["ignore", "inherit", "inherit"] });
    children.push(w);
    return w;
  };
  for (let i = 0; i < (opts.workers ?? 1); i++) startWorker();

  const baseURL = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (web.exitCode !== null) throw new Error("the console exited during start (is there a build? run `npm run build`)");
    try {
      if ((await fetch(`${baseURL}/api/health`)).ok) break;
    } catch {
      // not yet listening
    }
    if (Date.now() > deadline) throw new Error("the console did not become healthy in 90s");
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    baseURL,
    databaseUrl,
    startWorker,
    stop: async () => {
      // A child killed by a signal (a test's kill -9) has a signalCode and no exitCode.
      const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
      const exited = Promise.all(running.map((c) => new Promise((r) => c.once("exit", r))));
      for (const c of running) c.kill("SIGTERM");
      // As startConsole's stop: an open keep-alive socket must not hold the console's graceful stop.
      const timer = setTimeout(() => running.forEach((c) => c.kill("SIGKILL")), 5000);
      await exited;
      clearTimeout(timer);
      await dropDatabase?.().catch(() => {});
      await embedded?.stop();
    },
  };
}
