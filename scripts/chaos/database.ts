// The chaos run's PostgreSQL, and its one "database crash" fault. Embedded (default): a
// throwaway cluster this process owns, crashed with `pg_ctl stop -m immediate` (no checkpoint, no
// goodbye to clients: on start it replays its WAL, as after a power cut), held down for a few
// seconds, and started again with the options it was started with. DATABASE_URL: a fresh database
// on that server; a server we do not own cannot be restarted, so the fault terminates every
// backend of the chaos database instead (what clients see of a restart, minus the downtime).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { portIsFree, startEmbeddedPostgres } from "../../lib/db/embedded";
import { migrateDatabase } from "../../lib/db/migrate";
import { binDirOf, pgCtlAsync, waitAccepting } from "../../lib/testing/standby";

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
 * The harness's own records, kept by triggers it installs (not part of Slotkeeper), each with the
 * server's clock_timestamp(): the real time, which the suite's clock steps leave alone (sk_now(),
 * and so every time Slotkeeper stores, reads up to a step ahead while a step lasts, and goes back):
 * - chaos_ledger_writes: every accepted ledger write (key, token, worker), so a superseded write
 *   that was later overwritten still shows, and who held the slot's run as the write landed (the
 *   lease's owner and token, and whether the lease was live on the database clock): a write is
 *   superseded when its attempt no longer held a live lease, whether or not a successor had
 *   started yet;
 * - chaos_claims: every claim (run, attempt, worker), the real time each attempt started;
 *   chaos_claim_ms(run, attempt) reads it in epoch milliseconds.
 */
export async function installWitnessTriggers(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`
      CREATE TABLE chaos_ledger_writes (idempotency_key text NOT NULL, fencing_token int NOT NULL, worker_id text NOT NULL, at timestamptz NOT NULL,
        holder text, holder_token int, lease_live boolean);
      CREATE FUNCTION chaos_ledger_write() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        -- The write's own clock: a first write's created_at is sk_now() as its fence read it; an
        -- overwrite keeps the first write's, so it reads sk_now() again (the same now(), the
        -- transaction's start). This function's statements see rows committed since the write's,
        -- so a takeover that began after the write (its claim stamped later) does not count.
        INSERT INTO chaos_ledger_writes
          SELECT NEW.idempotency_key, NEW.fencing_token, NEW.worker_id, clock_timestamp(), q.lease_owner, q.attempts,
            (q.lease_owner = NEW.worker_id AND q.attempts = NEW.fencing_token AND q.lease_expires_at > w.now)
              OR (q.attempts = NEW.fencing_token + 1 AND q.started_at >= w.now)
          FROM (SELECT CASE WHEN TG_OP = 'INSERT' THEN NEW.created_at ELSE sk_now() END AS now) w LEFT JOIN LATERAL (
            SELECT lease_owner, attempts, lease_expires_at, started_at FROM run_queue
            WHERE schedule_id = NEW.schedule_id AND scheduled_for = NEW.scheduled_for AND state = 'running' LIMIT 1) q ON true;
        RETURN NULL;
      END $$;
      CREATE TRIGGER chaos_ledger_write AFTER INSERT OR UPDATE ON ledger FOR EACH ROW EXECUTE FUNCTION chaos_ledger_write();
      CREATE TABLE chaos_claims (run_id bigint NOT NULL, attempt int NOT NULL, worker_id text, at timestamptz NOT NULL);
      CREATE FUNCTION chaos_claim() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO chaos_claims VALUES (NEW.run_id, NEW.attempts, NEW.lease_owner, clock_timestamp());
        RETURN NULL;
      END $$;
      CREATE TRIGGER chaos_claim AFTER UPDATE OF attempts ON run_queue FOR EACH ROW WHEN (NEW.attempts > OLD.attempts) EXECUTE FUNCTION chaos_claim();
      CREATE FUNCTION chaos_claim_ms(run bigint, n int) RETURNS float8 LANGUAGE sql STABLE
        AS $$ SELECT (extract(epoch FROM min(c.at)) * 1000)::float8 FROM chaos_claims c WHERE c.run_id = run AND c.attempt = n $$;`);
  } finally {
    await c.end();
  }
}

/**
 * What the server's own log should say about a stall: statements over a second, lock waits,
 * checkpoints and every autovacuum, each line with its time, process and application. ALTER SYSTEM
 * writes postgresql.auto.conf, which the standby's copy of the data folder carries along.
 */
async function logSlowness(url: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    for (const [k, v] of [["log_min_duration_statement", "1000"], ["log_lock_waits", "on"], ["log_checkpoints", "on"], ["log_autovacuum_min_duration", "0"], ["log_line_prefix", "%m [%p] %a: "]]) await c.query(`ALTER SYSTEM SET ${k} = '${v}'`);
    await c.query("SELECT pg_reload_conf()");
  } finally {
    await c.end();
  }
}

/** The server log of a cluster made by lib/db/embedded.ts or lib/testing/standby.ts (beside its data folder). */
export const serverLogOf = (pgdata: string) => path.join(path.dirname(pgdata), "postgres.log");

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
    await installWitnessTriggers(url);
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
  await installWitnessTriggers(embedded.url);
  await logSlowness(embedded.url);
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
      await pgCtlAsync(bin, pgdata, ["stop", "-w", "-t", "60", "-m", "immediate"]);
      await sleep(downMs);
      await pgCtlAsync(bin, pgdata, ["start", "-w", "-t", "60", "-l", logFile, "-o", options]);
      await waitAccepting(embedded.url, 60_000);
    },
    stop: async () => {
      await embedded.stop().catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
