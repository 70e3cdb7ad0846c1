// `npm start` (and `npm run dev` with --dev): the whole product in one command. Brings up the
// database (embedded unless DATABASE_URL is set), applies migrations, builds the console if the
// build is missing or stale, then runs the console and one worker until Ctrl-C, and stops them all.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { ConfigError, loadConfig } from "../lib/config";
import { DatabaseUnreachableError, describeUrl, openDatabase } from "../lib/db/connect";
import { EmbeddedDatabaseError, portIsFree } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";
import { buildIsStale } from "./build-state";
import { workerNodeArgs } from "../worker/node-flags";

const dev = process.argv.includes("--dev");
const noWorker = process.argv.includes("--no-worker");
const say = (msg: string) => console.log(`slotkeeper: ${msg}`);
/** A worker that ran at least this long before it died is restarted; one that dies sooner is a start-up failure. */
const WORKER_MIN_LIFE_MS = 10_000;

async function waitForHealth(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the console exited with code ${child.exitCode} before it was ready`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the console did not answer on port ${port} within ${timeoutMs / 1000}s`);
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once("exit", () => r()));
}

let database: Awaited<ReturnType<typeof openDatabase>> | undefined;

async function main() {
  const started = Date.now();
  const config = loadConfig();
  if (!(await portIsFree(config.port, "0.0.0.0"))) {
    throw new ConfigError(`port ${config.port} for the console is already in use; stop what uses it or set PORT`);
  }
  database = await openDatabase(config);
  say(`database ${describeUrl(database.url)}${config.databaseUrl ? "" : ` (embedded, data in ${database.dataDir})`}`);
  await migrateDatabase(database.url);

  if (!dev && buildIsStale()) {
    say("building the console (first start, or sources changed)…");
    const r = spawnSync(process.execPath, [require.resolve("next/dist/bin/next"), "build"], { stdio: "inherit" });
    if (r.status !== 0) throw new Error("next build failed");
  }

  const env = { ...process.env, DATABASE_URL: database.url, PORT: String(config.port) };
  const children: ChildProcess[] = [];
  const web = spawn(process.execPath, [require.resolve("next/dist/bin/next"), dev ? "dev" : "start", "-p", String(config.port)], {
    env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  children.push(web);

  let stopping = false;
  // A worker that crashes (kill -9, out of memory) is replaced, as a service manager would: its runs
  // are taken over when their leases expire, and the console, the database and any other worker
  // joined to it keep going. One that dies within WORKER_MIN_LIFE_MS of starting (bad config, no
  // database) stops everything instead of restarting in a loop.
  const startWorker = () => {
    const startedAt = Date.now();
    const worker = spawn(process.execPath, workerNodeArgs(), { env, stdio: ["ignore", "inherit", "inherit"] });
    children.push(worker);
    worker.once("exit", (code, signal) => {
      if (stopping) return;
      children.splice(children.indexOf(worker), 1);
      if (Date.now() - startedAt >= WORKER_MIN_LIFE_MS) {
        say(`worker exited (${signal ?? code}); starting another`);
        startWorker();
      } else {
        say(`worker exited (${signal ?? code}) ${Math.round((Date.now() - startedAt) / 1000)}s after it started; stopping everything`);
        void stop(1);
      }
    });
  };
  if (!noWorker) startWorker();

  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say("stopping…");
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
    const grace = setTimeout(() => children.forEach((c) => c.exitCode === null && c.kill("SIGKILL")), config.shutdownGraceMs + 5_000);
    await Promise.all(children.map(exited));
    clearTimeout(grace);
    await database?.stop();
    say("stopped");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  web.once("exit", (code, signal) => {
    if (!stopping) {
      say(`console exited (${signal ?? code}); stopping everything`);
      void stop(1);
    }
  });

  await waitForHealth(config.port, web, dev ? 120_000 : 60_000);
  say(`ready in ${((Date.now() - started) / 1000).toFixed(1)}s: console on http://localhost:${config.port}${noWorker ? "" : ", one worker running"}`);
}

main().catch(async (err) => {
  const known = err instanceof ConfigError || err instanceof DatabaseUnreachableError || err instanceof EmbeddedDatabaseError;
  console.error(`slotkeeper: ${known ? err.message : (err?.stack ?? String(err))}`);
  await database?.stop().catch(() => {});
  process.exit(1);
});
