// Throwaway PostgreSQL clusters from the embedded binaries, and streaming standbys of them: the
// chaos suite's failover (scripts/chaos/standby.ts) and the replica reads' tests use these.
//
// The embedded package ships initdb, pg_ctl and postgres but no pg_basebackup (and Debian's is an
// older major version, which refuses a newer server), so a standby is made with the low-level
// backup API: pg_backup_start, a file copy of the data folder, pg_backup_stop's backup_label.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { portIsFree, startEmbeddedPostgres } from "../db/embedded";
import { waitUntil } from "./wait";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 500; p++) if (await portIsFree(p)) return p;
  throw new Error(`no free port from ${from}`);
}

/** The folder of the running server's own binaries (from its pid), where pg_ctl lives too. */
export function binDirOf(pgdata: string): string {
  const pid = Number.parseInt(fs.readFileSync(path.join(pgdata, "postmaster.pid"), "utf8").split("\n")[0], 10);
  return path.dirname(fs.readlinkSync(`/proc/${pid}/exe`));
}

/** Run pg_ctl as the data directory's owner (PostgreSQL refuses to run as root). */
export function pgCtl(bin: string, pgdata: string, args: string[]): void {
  const st = fs.statSync(pgdata);
  const r = spawnSync(path.join(bin, "pg_ctl"), [...args, "-D", pgdata], {
    encoding: "utf8",
    uid: process.getuid?.() === 0 ? st.uid : undefined,
    gid: process.getuid?.() === 0 ? st.gid : undefined,
  });
  if (r.status !== 0) throw new Error(`pg_ctl ${args[0]} failed: ${(r.stderr || r.stdout).trim()}`);
}

/**
 * pg_ctl without blocking this process: for a harness that also carries live connections (the
 * fault suite's proxies and witness run in the process that crashes and promotes the servers).
 */
export function pgCtlAsync(bin: string, pgdata: string, args: string[]): Promise<void> {
  const st = fs.statSync(pgdata);
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(bin, "pg_ctl"), [...args, "-D", pgdata], {
      stdio: ["ignore", "pipe", "pipe"],
      uid: process.getuid?.() === 0 ? st.uid : undefined,
      gid: process.getuid?.() === 0 ? st.gid : undefined,
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`pg_ctl ${args[0]} failed: ${out.trim()}`))));
  });
}

/** Resolve once the server at `url` answers a query. */
export async function waitAccepting(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query("SELECT 1");
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => {});
      if (Date.now() > deadline) throw new Error(`database did not come back in ${timeoutMs} ms`, { cause: err });
      await sleep(200);
    }
  }
}

export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

/** A cluster this process started: its URL and folders (pg_ctl runs on them). */
export type Cluster = { url: string; port: number; pgdata: string; bin: string; stop: () => Promise<void> };

/** A new embedded cluster in a temporary folder, deleted on stop (as root it runs as `postgres`). */
export async function startCluster(opts: { fromPort: number; database?: string }): Promise<Cluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-cluster-"));
  fs.chmodSync(dir, 0o755); // as root the server runs as `postgres`, which must reach it
  const port = await freePort(opts.fromPort);
  const embedded = await startEmbeddedPostgres({ dir, port, ephemeral: true, database: opts.database });
  return {
    url: embedded.url,
    port,
    pgdata: embedded.dataDir,
    bin: binDirOf(embedded.dataDir),
    stop: async () => {
      await embedded.stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The standby's sync_state on the primary (null when it is not streaming). */
export async function syncState(primaryUrl: string, appName: string): Promise<string | null> {
  return withClient(primaryUrl, async (c) => {
    const r = await c.query<{ sync_state: string }>("SELECT sync_state FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'", [appName]);
    return r.rows[0]?.sync_state ?? null;
  });
}

/** A standby cluster: where it listens, its folders, and start/stop for the tests that take it down. */
export type Standby = Cluster & {
  /** Its application_name on the primary (pg_stat_replication) and its replication slot's name. */
  appName: string;
  /** pg_ctl stop -m fast, keeping its folder (start brings it back). */
  halt: () => void;
  /** Start it again after halt; resolves when it streams again. */
  start: () => Promise<void>;
};

/**
 * Make a streaming standby of a cluster this process runs (`primary`), asynchronous unless
 * `synchronous`. The copy is taken online (the primary keeps running); a physical replication
 * slot keeps the WAL the standby needs from the backup's start.
 */
export async function startStandby(
  primary: { url: string; pgdata: string; bin: string },
  opts: { appName: string; synchronous: boolean; fromPort?: number; log?: (line: string) => void },
): Promise<Standby> {
  const { appName } = opts;
  const { pgdata: primaryData, bin } = primary;
  const primaryUrl = new URL(primary.url);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-standby-"));
  fs.chmodSync(dir, 0o755); // as root the server runs as the data folder's owner, who must reach it
  const pgdata = path.join(dir, "pgdata");
  const owner = fs.statSync(primaryData);
  const asRoot = process.getuid?.() === 0;

  await withClient(primary.url, async (c) => {
    await c.query("SELECT pg_create_physical_replication_slot($1, true)", [appName]);
    // Non-exclusive backup: the label comes back from pg_backup_stop on this same session.
    await c.query("SELECT pg_backup_start($1, true)", [appName]);
    const excluded = ["postmaster.pid", "postmaster.opts", "pg_wal/*", "pg_replslot/*", "pg_stat_tmp/*", "pg_dynshmem/*", "pg_notify/*", "pg_serial/*", "pg_snapshots/*", "pg_subtrans/*", "backup_label", "tablespace_map"];
    const r = spawnSync("rsync", ["-a", ...excluded.map((e) => `--exclude=/${e}`), `${primaryData}/`, `${pgdata}/`], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`standby: copying the data folder failed: ${r.stderr.trim()}`);
    const stop = await c.query<{ labelfile: string }>("SELECT labelfile FROM pg_backup_stop(false)");
    fs.writeFileSync(path.join(pgdata, "backup_label"), stop.rows[0].labelfile);
  });
  const conninfo = `host=${primaryUrl.hostname} port=${primaryUrl.port} user=${decodeURIComponent(primaryUrl.username)} password=${decodeURIComponent(primaryUrl.password)} application_name=${appName}`;
  // Once promoted it waits for no standby until one of its own is made (ALTER SYSTEM then sets
  // it): in this file, not on the command line, where it could not be changed.
  fs.appendFileSync(path.join(pgdata, "postgresql.auto.conf"), `primary_conninfo = '${conninfo.replace(/'/g, "''")}'\nprimary_slot_name = '${appName}'\nsynchronous_standby_names = ''\n`);
  fs.writeFileSync(path.join(pgdata, "standby.signal"), "");
  const logFile = path.join(dir, "postgres.log");
  fs.writeFileSync(logFile, "");
  if (asRoot) spawnSync("chown", ["-R", `${owner.uid}:${owner.gid}`, dir]);

  const port = await freePort(opts.fromPort ?? 58432);
  // The standby never waits for a standby of its own once promoted; it reconnects fast after the crash.
  const options = ["-c listen_addresses=127.0.0.1", "-c unix_socket_directories=''", "-c max_connections=300", `-p ${port}`, "-c wal_retrieve_retry_interval=500ms"].join(" ");
  const u = new URL(primary.url);
  u.port = String(port);
  const url = u.toString();
  const start = async () => {
    pgCtl(bin, pgdata, ["start", "-w", "-t", "60", "-l", logFile, "-o", options]);
    await waitAccepting(url, 60_000);
    // A failed look (the primary busy restarting its WAL sender) is a "not yet", not an error.
    await waitUntil(() => syncState(primary.url, appName).then((s) => s !== null, () => false), 30_000, "the standby to stream", 200);
  };
  await start();
  if (opts.synchronous) {
    await withClient(primary.url, async (c) => {
      await c.query(`ALTER SYSTEM SET synchronous_standby_names = '${appName}'`);
      await c.query("SELECT pg_reload_conf()");
    });
    await waitUntil(() => syncState(primary.url, appName).then((s) => s === "sync", () => false), 30_000, "synchronous replication", 200);
  }
  opts.log?.(`standby on port ${port} streaming from ${primaryUrl.port} (${(await syncState(primary.url, appName)) ?? "?"})`);
  const halt = () => {
    try {
      pgCtl(bin, pgdata, ["stop", "-w", "-t", "60", "-m", "fast"]);
    } catch {
      // already down
    }
  };
  return {
    url,
    port,
    pgdata,
    bin,
    appName,
    halt,
    start,
    stop: async () => {
      halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
