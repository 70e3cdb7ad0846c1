// The chaos run's PostgreSQL, and its one "database crash" fault. Embedded (default): a
// throwaway cluster this process owns, crashed with `pg_ctl stop -m immediate` (no checkpoint, no
// goodbye to clients: on start it replays its WAL, as after a power cut), held down for a few
// seconds, and started again with the options it was started with. DATABASE_URL: a fresh database
// on that server; a server we do not own cannot be restarted, so the fault terminates every
// backend of the chaos database instead (what clients see of a restart, minus the downtime).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { portIsFree, startEmbeddedPostgres } from "../../lib/db/embedded";
import { migrateDatabase } from "../../lib/db/migrate";
import { binDirOf, pgCtl, waitAccepting } from "../../lib/testing/standby";

export type ChaosDatabase = {
  url: string;
  host: string;
  port: number;
  /** "pg_ctl" (a real stop/start) or "terminate_backends" (DATABASE_URL mode). */
  restartKind: "pg_ctl" | "terminate_backends";
  /** Take the server down for `downMs`, then bring it back; resolves when it accepts connections. */
  restart: (downMs: number) => Promise<void>;
  stop: () => Promise<void>;
  /** The embedded cluster's folders (absent with DATABASE_URL), for the failover's standby. */
  cluster?: { pgdata: string; bin: string };
};

async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 500; p++) if (await portIsFree(p)) return p;
  throw new Error("no free port for the chaos database");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server's own command line (postmaster.opts) turned back into a `pg_ctl start -o` string. */
function startOptions(pgdata: string): string {
  const opts = fs.readFileSync(path.join(pgdata, "postmaster.opts"), "utf8");
  const tokens = [...opts.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
  const out: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i] === "-D") i++;
    else out.push(`'${tokens[i].replace(/'/g, "'\\''")}'`);
  }
  return out.join(" ");
}

/**
 * The harness's own record of every accepted ledger write (not part of Slotkeeper): a trigger
 * appends the key, token, worker and the server's clock_timestamp() of each insert or overwrite,
 * so a superseded write that was later overwritten still shows.
 */
export async function installLedgerWitness(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`
      CREATE TABLE chaos_ledger_writes (idempotency_key text NOT NULL, fencing_token int NOT NULL, worker_id text NOT NULL, at timestamptz NOT NULL);
      CREATE FUNCTION chaos_ledger_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO chaos_ledger_writes VALUES (NEW.idempotency_key, NEW.fencing_token, NEW.worker_id, clock_timestamp());
        RETURN NULL;
      END $$;
      CREATE TRIGGER chaos_ledger_write AFTER INSERT OR UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION chaos_ledger_write();`);
  } finally {
    await c.end();
  }
}

/** Start (or create) the chaos run's database and apply migrations. */
export async function startChaosDatabase(): Promise<ChaosDatabase> {
  const external = process.env.DATABASE_URL;
  if (external) {
    const name = `sk_chaos_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: external });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const u = new URL(external);
    u.pathname = `/${name}`;
    const url = u.toString();
    await migrateDatabase(url);
    await installLedgerWitness(url);
    const withAdmin = async (fn: (c: pg.Client) => Promise<unknown>) => {
      const a = new pg.Client({ connectionString: external });
      await a.connect();
      try {
        await fn(a);
      } finally {
        await a.end();
      }
    };
    return {
      url,
      host: u.hostname,
      port: Number(u.port || 5432),
      restartKind: "terminate_backends",
      restart: async (downMs) => {
        // Keep killing new sessions for the "down" period, as a refusing server would.
        const until = Date.now() + downMs;
        do {
          await withAdmin((a) => a.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]));
          await sleep(250);
        } while (Date.now() < until);
      },
      stop: () => withAdmin((a) => a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).catch(() => {}),
    };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-chaos-"));
  fs.chmodSync(dir, 0o755); // as root the server runs as `postgres`, which must reach it
  const embedded = await startEmbeddedPostgres({ dir, port: await freePort(57432), ephemeral: true });
  await migrateDatabase(embedded.url);
  await installLedgerWitness(embedded.url);
  const u = new URL(embedded.url);
  const pgdata = embedded.dataDir;
  const bin = binDirOf(pgdata);
  const logFile = path.join(path.dirname(pgdata), "postgres.log");
  return {
    url: embedded.url,
    host: u.hostname,
    port: Number(u.port),
    restartKind: "pg_ctl",
    cluster: { pgdata, bin },
    restart: async (downMs) => {
      const options = startOptions(pgdata);
      pgCtl(bin, pgdata, ["stop", "-w", "-t", "60", "-m", "immediate"]);
      await sleep(downMs);
      pgCtl(bin, pgdata, ["start", "-w", "-t", "60", "-l", logFile, "-o", options]);
      await waitAccepting(embedded.url, 60_000);
    },
    stop: async () => {
      await embedded.stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
