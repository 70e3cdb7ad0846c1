import path from "node:path";
import { z } from "zod";
import { parsePerScheduleMetrics, type PerScheduleMetrics } from "./metrics/per-schedule";
import { parseOutboundAllow, type AllowEntry } from "./security/outbound";

/** Named defaults for every setting; `loadConfig` validates the environment against them once. */
export const configDefaults = {
  dataDir: ".slotkeeper",
  embeddedPgPort: 54329,
  port: 3000,
  logLevel: "info",
  workerConcurrency: 10,
  pollIntervalMs: 1000,
  tickHorizonSeconds: 120,
  catchUpGraceSeconds: 30,
  claimBatchSize: 100,
  partitions: 16,
  partitionLeaseSeconds: 15,
  shutdownGraceMs: 10_000,
  leaseSafetyMarginMs: 5_000,
  dbQueryTimeoutMs: 10_000,
  backfillMaxRuns: 10_000,
  payloadMaxBytes: 64 * 1024,
  retentionDays: 30,
  retentionMaxRuns: 10_000,
  publicUrl: "http://localhost:3000",
  alertIntervalSeconds: 15,
  alertReminderMinutes: 60,
  smtpFrom: "Slotkeeper <slotkeeper@localhost>",
  metricsHost: "127.0.0.1",
  replicaLagWarnSeconds: 5,
  overviewMaxAgeMs: 1_000,
  /** Not a setting: the longest a worker loop waits between retries while the database fails (doubling from its interval). */
  loopMaxBackoffMs: 30_000,
} as const;

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const envSchema = z.object({
  /** PostgreSQL connection string; when unset an embedded server is started. */
  DATABASE_URL: z.string().url().optional(),
  /**
   * The web process only: a streaming standby of DATABASE_URL's server. The console's read-only
   * pages and `/api/metrics` read there; every write, and every read that must see a write, stays
   * on DATABASE_URL (lib/server/replica.ts).
   */
  DATABASE_READ_URL: z.string().url().optional(),
  /** Replay lag above which the console shows a banner and /api/health says `lagging`. */
  SLOTKEEPER_REPLICA_LAG_WARN_SECONDS: z.coerce.number().min(0).max(86_400).default(configDefaults.replicaLagWarnSeconds),
  /**
   * The web process only: how long one reading of the Overview is shared by every reader before a
   * new one is made (lib/health/overview-shared.ts); 0 reads the database for every request.
   */
  SLOTKEEPER_OVERVIEW_MAX_AGE_MS: int(0, 60_000).default(configDefaults.overviewMaxAgeMs),
  /** Folder for local state: the embedded database's data lives in `<dir>/pgdata`. */
  SLOTKEEPER_DATA_DIR: z.string().min(1).default(configDefaults.dataDir),
  /** TCP port of the embedded PostgreSQL server. */
  SLOTKEEPER_PG_PORT: int(1, 65535).default(configDefaults.embeddedPgPort),
  /** Console (Next.js) port. */
  PORT: int(1, 65535).default(configDefaults.port),
  /** pino log level. */
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default(configDefaults.logLevel),
  /** Handlers one worker process runs at once. */
  SLOTKEEPER_CONCURRENCY: int(1, 10_000).default(configDefaults.workerConcurrency),
  /**
   * The queues a worker serves, each with its concurrency: `default:10,reports:2`. Unset: `default`
   * with SLOTKEEPER_CONCURRENCY. Parsed by parseQueues.
   */
  SLOTKEEPER_QUEUES: z.string().max(10_000).optional(),
  /** How often a worker ticks and claims when idle. */
  SLOTKEEPER_POLL_INTERVAL_MS: int(10, 60_000).default(configDefaults.pollIntervalMs),
  /** How far ahead the tick materialises slots (minutes at most). */
  SLOTKEEPER_TICK_HORIZON_SECONDS: int(0, 600).default(configDefaults.tickHorizonSeconds),
  /**
   * A never-attempted slot found unclaimed is missed when it is older than this, or sooner when
   * its schedule's next slot is already due (lib/schedules/missed.ts).
   */
  SLOTKEEPER_CATCH_UP_GRACE_SECONDS: int(0, 3600).default(configDefaults.catchUpGraceSeconds),
  /** Runs claimed per claim statement. */
  SLOTKEEPER_CLAIM_BATCH: int(1, 10_000).default(configDefaults.claimBatchSize),
  /** Number of partitions schedules are hashed into. */
  SLOTKEEPER_PARTITIONS: int(1, 4096).default(configDefaults.partitions),
  /**
   * How long a worker's hold on its partitions lasts without renewal (renewed every second): after
   * it, another worker may take them over. A dead worker's runs do not wait for it: its partitions
   * are orphaned after 3 s without a renewal and every live worker ticks and claims there until
   * someone holds them, and its expired run leases are rescued by anyone.
   */
  SLOTKEEPER_PARTITION_LEASE_SECONDS: int(3, 3600).default(configDefaults.partitionLeaseSeconds),
  /** On SIGTERM, how long in-flight handlers may run before they are aborted. */
  SLOTKEEPER_SHUTDOWN_GRACE_MS: int(0, 600_000).default(configDefaults.shutdownGraceMs),
  /** A worker stops committing this long before its lease would expire. */
  SLOTKEEPER_LEASE_SAFETY_MARGIN_MS: int(0, 600_000).default(configDefaults.leaseSafetyMarginMs),
  /** How long a worker waits for any answer from PostgreSQL before it gives the connection up (a silent network). */
  SLOTKEEPER_DB_QUERY_TIMEOUT_MS: int(100, 600_000).default(configDefaults.dbQueryTimeoutMs),
  /** Largest number of runs one backfill may create. */
  SLOTKEEPER_BACKFILL_MAX_RUNS: int(1, 1_000_000).default(configDefaults.backfillMaxRuns),
  /** Largest schedule payload, in bytes of JSON. */
  SLOTKEEPER_PAYLOAD_MAX_BYTES: int(2, 10 * 1024 * 1024).default(configDefaults.payloadMaxBytes),
  /** Days finished and skipped runs are kept (a schedule's retention_days overrides it). */
  SLOTKEEPER_RETENTION_DAYS: int(1, 36_500).default(configDefaults.retentionDays),
  /** Most runs kept per schedule; older finished ones beyond it are deleted (retention_max_runs overrides it). */
  SLOTKEEPER_RETENTION_MAX_RUNS: int(1, 100_000_000).default(configDefaults.retentionMaxRuns),
  /** The console's base URL, for the schedule link in every alert notification. */
  SLOTKEEPER_PUBLIC_URL: z.string().url().default(configDefaults.publicUrl),
  /** How often workers evaluate the alert rules (one worker evaluates per pass). */
  SLOTKEEPER_ALERT_INTERVAL_SECONDS: int(1, 3600).default(configDefaults.alertIntervalSeconds),
  /** Repeat a firing alert this often while it stays bad; 0 turns reminders off. */
  SLOTKEEPER_ALERT_REMINDER_MINUTES: int(0, 10_080).default(configDefaults.alertReminderMinutes),
  /** SMTP server for e-mail channels: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://host:465. */
  SLOTKEEPER_SMTP_URL: z.string().regex(/^smtps?:\/\/[^/]+/, "must look like smtp://user:pass@host:587 or smtps://host:465").optional(),
  /** Sender of alert e-mail. */
  SLOTKEEPER_SMTP_FROM: z.string().min(3).max(300).default(configDefaults.smtpFrom),
  /**
   * Host names, addresses or CIDR ranges the http handler and alert channels may reach although the
   * outbound address policy refuses them by default (loopback, private, link-local, metadata).
   */
  SLOTKEEPER_OUTBOUND_ALLOW: z
    .string()
    .optional()
    .transform((v, ctx) => {
      try {
        return parseOutboundAllow(v);
      } catch (err) {
        ctx.addIssue({ code: "custom", message: `${(err as Error).message}; expected comma-separated host names, addresses or CIDR ranges, e.g. 10.0.0.0/8,billing.internal` });
        return z.NEVER;
      }
    }),
  /** Worker id; defaults to host-pid-random. */
  SLOTKEEPER_WORKER_ID: z.string().min(1).max(200).optional(),
  /** Unset: the worker does not serve `command`. `all`, or a comma-separated list of absolute paths of the executables it may run. */
  SLOTKEEPER_COMMANDS: z.string().max(100_000).optional(),
  /** Unset: no worker metrics endpoint. Otherwise the port of the worker's own `/metrics`. */
  SLOTKEEPER_METRICS_PORT: int(1, 65535).optional(),
  /** The address the worker's `/metrics` listens on (loopback unless set). */
  SLOTKEEPER_METRICS_HOST: z.string().min(1).max(255).default(configDefaults.metricsHost),
  /** Unset: `/api/metrics` aggregates. `worst:N` or `tag:NAME` adds per-schedule series for those schedules only. */
  SLOTKEEPER_METRICS_PER_SCHEDULE: z.string().max(300).optional(),
});

/** Which programs a worker's `command` handler may run: every one, these absolute paths, or none (not served). */
export type CommandsPolicy = "all" | string[] | null;

/**
 * SLOTKEEPER_COMMANDS as a policy: unset → null; `all` → "all"; otherwise every comma-separated
 * entry must be an absolute path (normalised, so `/usr//bin/x` and `/usr/bin/x` are one entry).
 * Throws ConfigError naming the variable and the entry at fault.
 */
export function parseCommandsPolicy(value: string | undefined): CommandsPolicy {
  if (value === undefined || value.trim() === "") return null;
  if (value.trim() === "all") return "all";
  const entries = value.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (entries.length === 0) throw new ConfigError("invalid SLOTKEEPER_COMMANDS: give `all` or a comma-separated list of absolute paths");
  for (const e of entries) {
    if (e === "all") throw new ConfigError("invalid SLOTKEEPER_COMMANDS: `all` cannot be combined with a list of paths");
    if (!path.isAbsolute(e)) throw new ConfigError(`invalid SLOTKEEPER_COMMANDS: ${JSON.stringify(e)} is not an absolute path (list executables as /usr/bin/backup, or give \`all\`)`);
  }
  return [...new Set(entries.map((e) => path.normalize(e)))];
}

/** A queue's name: the schedule field's rule (lib/schedules/input.ts QUEUE_PATTERN). */
export const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** The queues a worker serves and each one's concurrency. */
export type Queues = Record<string, number>;

/**
 * Check a queues map (SLOTKEEPER_QUEUES parsed, or runWorker's `queues` option): at least one queue,
 * each a valid name with a whole concurrency from 1 to 10,000. Throws ConfigError naming `what`.
 */
export function validateQueues(queues: unknown, what: string): Queues {
  if (typeof queues !== "object" || queues === null || Array.isArray(queues)) throw new ConfigError(`invalid ${what}: give queues and their concurrency, e.g. { default: 10, reports: 2 }`);
  const entries = Object.entries(queues as Record<string, unknown>);
  if (entries.length === 0) throw new ConfigError(`invalid ${what}: name at least one queue`);
  for (const [name, n] of entries) {
    if (!QUEUE_NAME.test(name)) throw new ConfigError(`invalid ${what}: ${JSON.stringify(name)} is not a queue name (1-64 letters, digits and . _ : -, starting with a letter or digit)`);
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > 10_000) throw new ConfigError(`invalid ${what}: queue ${name} needs a concurrency from 1 to 10000, got ${JSON.stringify(n)}`);
  }
  return Object.fromEntries(entries) as Queues;
}

/**
 * SLOTKEEPER_QUEUES (`default:10,reports:2`) as a map; unset → `{ default: concurrency }`. Throws
 * ConfigError naming the variable and the entry at fault.
 */
export function parseQueues(value: string | undefined, concurrency: number): Queues {
  if (value === undefined || value.trim() === "") return { default: concurrency };
  const queues: Queues = {};
  for (const raw of value.split(",")) {
    const entry = raw.trim();
    const m = /^([^:\s]+):(\d+)$/.exec(entry);
    if (!m) throw new ConfigError(`invalid SLOTKEEPER_QUEUES: ${JSON.stringify(entry)} is not name:concurrency (e.g. default:10,reports:2)`);
    if (m[1] in queues) throw new ConfigError(`invalid SLOTKEEPER_QUEUES: queue ${m[1]} is named twice`);
    queues[m[1]] = Number(m[2]);
  }
  return validateQueues(queues, "SLOTKEEPER_QUEUES");
}

/** How many handlers a worker with these queues runs at once. */
export const totalConcurrency = (queues: Queues): number => Object.values(queues).reduce((a, b) => a + b, 0);

export type Config = {
  databaseUrl: string | undefined;
  /** DATABASE_READ_URL: the standby the web process reads from; undefined = it reads from the primary. */
  databaseReadUrl: string | undefined;
  /** SLOTKEEPER_REPLICA_LAG_WARN_SECONDS: replay lag above which the console warns. */
  replicaLagWarnSeconds: number;
  /** SLOTKEEPER_OVERVIEW_MAX_AGE_MS: how long one Overview reading is shared; 0: not shared. */
  overviewMaxAgeMs: number;
  dataDir: string;
  embeddedPgPort: number;
  port: number;
  logLevel: z.infer<typeof envSchema>["LOG_LEVEL"];
  /** SLOTKEEPER_CONCURRENCY: the `default` queue's concurrency when SLOTKEEPER_QUEUES is unset. */
  workerConcurrency: number;
  /** SLOTKEEPER_QUEUES: the queues the worker serves and each one's concurrency. */
  queues: Queues;
  pollIntervalMs: number;
  tickHorizonSeconds: number;
  catchUpGraceSeconds: number;
  claimBatchSize: number;
  partitions: number;
  partitionLeaseSeconds: number;
  shutdownGraceMs: number;
  leaseSafetyMarginMs: number;
  /** SLOTKEEPER_DB_QUERY_TIMEOUT_MS: a worker statement with no answer for this long fails and its connection is dropped. */
  dbQueryTimeoutMs: number;
  backfillMaxRuns: number;
  payloadMaxBytes: number;
  retentionDays: number;
  retentionMaxRuns: number;
  publicUrl: string;
  alertIntervalSeconds: number;
  alertReminderMinutes: number;
  smtpUrl: string | undefined;
  smtpFrom: string;
  workerId: string | undefined;
  /** What SLOTKEEPER_OUTBOUND_ALLOW opens on purpose (lib/security/outbound.ts applies it). */
  outboundAllow: AllowEntry[];
  /** SLOTKEEPER_COMMANDS: the programs this worker's `command` handler may run; null = it does not serve `command`. */
  commands: CommandsPolicy;
  /** SLOTKEEPER_METRICS_PORT: the worker's own `/metrics` port; undefined = not served. */
  metricsPort: number | undefined;
  /** SLOTKEEPER_METRICS_HOST: the address that endpoint listens on. */
  metricsHost: string;
  /** SLOTKEEPER_METRICS_PER_SCHEDULE: which schedules get series of their own in `/api/metrics`; null = none. */
  metricsPerSchedule: PerScheduleMetrics;
};

/** Thrown when the environment holds an invalid setting; the message names the variable. */
export class ConfigError extends Error {}

/** Parse the environment once into a typed config, failing fast with the offending variable's name. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`invalid ${String(issue.path[0])}: ${issue.message}`);
  }
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    databaseReadUrl: e.DATABASE_READ_URL,
    replicaLagWarnSeconds: e.SLOTKEEPER_REPLICA_LAG_WARN_SECONDS,
    overviewMaxAgeMs: e.SLOTKEEPER_OVERVIEW_MAX_AGE_MS,
    dataDir: path.resolve(e.SLOTKEEPER_DATA_DIR),
    embeddedPgPort: e.SLOTKEEPER_PG_PORT,
    port: e.PORT,
    logLevel: e.LOG_LEVEL,
    workerConcurrency: e.SLOTKEEPER_CONCURRENCY,
    queues: parseQueues(e.SLOTKEEPER_QUEUES, e.SLOTKEEPER_CONCURRENCY),
    pollIntervalMs: e.SLOTKEEPER_POLL_INTERVAL_MS,
    tickHorizonSeconds: e.SLOTKEEPER_TICK_HORIZON_SECONDS,
    catchUpGraceSeconds: e.SLOTKEEPER_CATCH_UP_GRACE_SECONDS,
    claimBatchSize: e.SLOTKEEPER_CLAIM_BATCH,
    partitions: e.SLOTKEEPER_PARTITIONS,
    partitionLeaseSeconds: e.SLOTKEEPER_PARTITION_LEASE_SECONDS,
    shutdownGraceMs: e.SLOTKEEPER_SHUTDOWN_GRACE_MS,
    leaseSafetyMarginMs: e.SLOTKEEPER_LEASE_SAFETY_MARGIN_MS,
    dbQueryTimeoutMs: e.SLOTKEEPER_DB_QUERY_TIMEOUT_MS,
    backfillMaxRuns: e.SLOTKEEPER_BACKFILL_MAX_RUNS,
    payloadMaxBytes: e.SLOTKEEPER_PAYLOAD_MAX_BYTES,
    retentionDays: e.SLOTKEEPER_RETENTION_DAYS,
    retentionMaxRuns: e.SLOTKEEPER_RETENTION_MAX_RUNS,
    publicUrl: e.SLOTKEEPER_PUBLIC_URL,
    alertIntervalSeconds: e.SLOTKEEPER_ALERT_INTERVAL_SECONDS,
    alertReminderMinutes: e.SLOTKEEPER_ALERT_REMINDER_MINUTES,
    smtpUrl: e.SLOTKEEPER_SMTP_URL,
    smtpFrom: e.SLOTKEEPER_SMTP_FROM,
    workerId: e.SLOTKEEPER_WORKER_ID,
    outboundAllow: e.SLOTKEEPER_OUTBOUND_ALLOW,
    commands: parseCommandsPolicy(e.SLOTKEEPER_COMMANDS),
    metricsPort: e.SLOTKEEPER_METRICS_PORT,
    metricsHost: e.SLOTKEEPER_METRICS_HOST,
    metricsPerSchedule: parsePerScheduleMetrics(e.SLOTKEEPER_METRICS_PER_SCHEDULE, (m) => new ConfigError(`invalid SLOTKEEPER_METRICS_PER_SCHEDULE: ${m}`)),
  };
}
