// The package as another project gets it: `npm pack`, installed from the tarball into a fresh
// project in a temporary folder outside the repository, a plain .mjs worker with a custom handler
// (no loader flags, no TypeScript), schedules made with `slotkeeper/client`, and a console of its
// own, two default workers (`worker/main.ts`, as `npm run worker` starts it) and a real PostgreSQL.
// The consumer's worker serves only its own handler (a service that owns its jobs); the default
// workers serve the built-ins and not it. Routing must send each run to a worker that has its
// handler: every slot of the custom schedules is executed by the consumer's worker (its handler's
// own record of each slot), none goes dead, and a built-in schedule (sql-ledger, whose ledger rows
// name the worker that wrote them) keeps running on the default workers.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import pg from "pg";
import { startStack, type Stack } from "./stack";

const ROOT = path.resolve(__dirname, "..");
const CUSTOM_WORKER = "consumer-worker-1";

const WORKER_MJS = `
import fs from "node:fs";
import { defineHandler, NonRetryableError, runWorker } from "slotkeeper/worker";

const stamp = defineHandler({
  name: "stamp",
  idempotent: true,
  description: "Appends its slot to a file: the effect the test counts.",
  async run(ctx) {
    if (!process.env.EFFECTS_FILE) throw new NonRetryableError("EFFECTS_FILE is not set");
    fs.appendFileSync(process.env.EFFECTS_FILE, JSON.stringify({ key: ctx.idempotencyKey, schedule: ctx.schedule.name, slot: ctx.slot.toISOString(), worker: ctx.workerId }) + "\\n");
    ctx.log.info({ event: "stamp:written" }, "stamped %s", ctx.slot.toISOString());
    return { stamped: ctx.slot.toISOString() };
  },
});

// Only its own handler: the built-ins run on the default workers.
const worker = await runWorker({ handlers: [stamp], withoutBuiltins: true });
process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
`;

const CLIENT_MJS = `
import { createClient, SlotkeeperApiError } from "slotkeeper/client";
const sk = createClient({ url: process.env.SLOTKEEPER_URL });
const [action, ...names] = process.argv.slice(2);
let out;
if (action === "create") {
  out = [];
  for (const [i, name] of names.entries()) out.push(await sk.createSchedule({ name, handler: "stamp", everySeconds: i + 1, catchUp: "all", leaseSeconds: 30 }));
  try {
    await sk.createSchedule({ name: "bad", handler: "stamp", everySeconds: 0 });
  } catch (err) {
    out.push({ refused: err instanceof SlotkeeperApiError, field: err.field, status: err.status });
  }
} else if (action === "create-ledger") {
  out = await Promise.all(names.map((name) => sk.createSchedule({ name, handler: "sql-ledger", everySeconds: 1, catchUp: "all", leaseSeconds: 30 })));
} else if (action === "pause") {
  out = await Promise.all(names.map((n) => sk.pauseSchedule(n)));
} else if (action === "runs") {
  out = {};
  for (const name of names) {
    const runs = [];
    let cursor;
    do {
      const page = await sk.listScheduleRuns(name, { limit: 200, cursor });
      runs.push(...page.runs);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    out[name] = runs;
  }
} else if (action === "run") {
  out = await sk.getRun(Number(names[0]));
} else if (action === "workers") {
  out = await sk.listWorkers();
}
console.log(JSON.stringify(out));
`;

// The same API from TypeScript (nodenext resolution): the declarations must carry the types.
const CONSUMER_TS = `
import { defineHandler, NonRetryableError, runWorker, type HandlerContext, type RunningWorker } from "slotkeeper/worker";
import { createClient, type RunDetail } from "slotkeeper/client";

const typed = defineHandler<{ customerId: string }>({
  name: "typed",
  idempotent: true,
  description: "",
  run: (ctx: HandlerContext<{ customerId: string }>) => {
    const id: string = ctx.payload.customerId;
    const token: number = ctx.fencingToken;
    if (!id) throw new NonRetryableError("customerId");
    return { id, token };
  },
});
export async function start(): Promise<RunningWorker> {
  const worker = await runWorker({ handlers: [typed] });
  const run: RunDetail = await createClient({ url: "http://localhost:3000" }).getRun(1);
  const stdout: string | null | undefined = run.attemptsList[0]?.output?.stdout;
  void stdout;
  return worker;
}
`;

function sh(cmd: string, args: string[], cwd: string, timeoutMs: number, env: Record<string, string | undefined> = process.env): string {
  const r = spawnSync(cmd, args, { cwd, env: env as NodeJS.ProcessEnv, encoding: "utf8", timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} (in ${cwd}) exited ${r.status ?? r.signal}:\n${r.stdout?.slice(-3000)}\n${r.stderr?.slice(-3000)}`);
  return r.stdout;
}

/** npm as a user runs it: from the registry, or from the local cache when it holds the package. */
function npm(args: string[], cwd: string, timeoutMs: number): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("npm_")));
  return sh("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], cwd, timeoutMs, { ...env, npm_config_update_notifier: "false" });
}

test("the packed package: a plain-Node worker in another project runs every slot of its custom handler's schedules, beside two default workers that keep running the built-ins", async () => {
  test.setTimeout(15 * 60_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-consumer-"));
  let stack: Stack | undefined;
  let worker: ChildProcess | undefined;
  try {
    // 1. Pack (prepack builds dist/) and install the tarball into a fresh project.
    npm(["pack", "--pack-destination", tmp], ROOT, 5 * 60_000);
    const tarball = fs.readdirSync(tmp).find((f) => /^slotkeeper-.*\.tgz$/.test(f));
    expect(tarball, "npm pack wrote a tarball").toBeTruthy();
    const project = path.join(tmp, "consumer");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "consumer-service", version: "1.0.0", private: true, type: "module" }, null, 2));
    // Optional dependencies (native builds of the console's tools, the embedded server's binaries) are not needed here.
    npm(["install", path.join(tmp, tarball!), "--prefer-offline", "--omit=optional"], project, 10 * 60_000);
    expect(fs.existsSync(path.join(project, "node_modules/slotkeeper/dist/worker.js"))).toBe(true);
    fs.writeFileSync(path.join(project, "worker.mjs"), WORKER_MJS);
    fs.writeFileSync(path.join(project, "client.mjs"), CLIENT_MJS);

    // 2. TypeScript sees the types (the repository's compiler, the consumer's resolution).
    fs.writeFileSync(path.join(project, "consumer.ts"), CONSUMER_TS);
    fs.writeFileSync(
      path.join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", target: "es2022", strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ["consumer.ts"] }),
    );
    sh(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project, 3 * 60_000);

    // 3. A console, two default workers and a database of their own; the consumer's worker beside them.
    stack = await startStack({ workers: 2 });
    const effects = path.join(tmp, "effects.jsonl");
    const env = { ...process.env, DATABASE_URL: stack.databaseUrl, SLOTKEEPER_URL: stack.baseURL, SLOTKEEPER_WORKER_ID: CUSTOM_WORKER, SLOTKEEPER_POLL_INTERVAL_MS: "250", EFFECTS_FILE: effects, LOG_LEVEL: "warn" };
    worker = spawn(process.execPath, ["worker.mjs"], { cwd: project, env: env as NodeJS.ProcessEnv, stdio: ["ignore", "inherit", "inherit"] });
    const client = (...args: string[]) => JSON.parse(sh(process.execPath, ["client.mjs", ...args], project, 60_000, env));
    type WorkerListing = { id: string; status: string; handlers: { name: string }[] };
    const handlersOf = (w: WorkerListing) => w.handlers.map((h) => h.name);
    // Three live workers: the consumer's with its handler only, two default ones with the built-ins and without it.
    await expect.poll(() => (client("workers") as WorkerListing[]).filter((w) => w.status === "alive").length, { timeout: 90_000 }).toBe(3);
    const workers = client("workers") as WorkerListing[];
    expect(handlersOf(workers.find((w) => w.id === CUSTOM_WORKER)!)).toEqual(["stamp"]);
    const defaultWorkers = workers.filter((w) => w.id !== CUSTOM_WORKER).map((w) => w.id);
    expect(defaultWorkers).toHaveLength(2);
    for (const w of workers.filter((x) => x.id !== CUSTOM_WORKER)) {
      expect(handlersOf(w)).toContain("sql-ledger");
      expect(handlersOf(w)).not.toContain("stamp");
    }

    // 4. Two schedules of the custom handler and one of a built-in, made through slotkeeper/client; a bad one refused with its field.
    const names = ["stamp-every-1s", "stamp-every-2s"];
    const ledger = "ledger-every-1s";
    const created = client("create", ...names);
    expect(created.slice(0, 2).map((s: { name: string; handler: string }) => [s.name, s.handler])).toEqual(names.map((n) => [n, "stamp"]));
    expect(created[2]).toEqual({ refused: true, field: "everySeconds", status: 400 });
    expect(client("create-ledger", ledger).map((s: { handler: string }) => s.handler)).toEqual(["sql-ledger"]);

    // 5. Let slots come due and run, then pause all three and wait until nothing is pending or running.
    const all = [...names, ledger];
    const runsOf = () => client("runs", ...all) as Record<string, { id: number; state: string; scheduledFor: string; workerId: string | null }[]>;
    await expect.poll(() => Math.min(...Object.values(runsOf()).map((runs) => runs.filter((r) => r.state === "done").length)), { timeout: 120_000, intervals: [1000] }).toBeGreaterThanOrEqual(4);
    client("pause", ...all);
    await expect.poll(() => Object.values(runsOf()).flat().filter((r) => r.state === "pending" || r.state === "running").length, { timeout: 60_000 }).toBe(0);

    // 6. Every run there is is done (none dead), its slots one interval apart with none missing.
    const runs = runsOf();
    const slotsOf = (name: string, intervalMs: number) => {
      const mine = runs[name];
      expect(mine.length).toBeGreaterThanOrEqual(4);
      expect(mine.filter((r) => r.state !== "done"), `${name}: every run done, none dead or skipped`).toEqual([]);
      const slots = mine.map((r) => Date.parse(r.scheduledFor)).sort((a, b) => a - b);
      for (let k = 1; k < slots.length; k++) expect(slots[k] - slots[k - 1], `${name}: no slot missing`).toBe(intervalMs);
      return slots;
    };

    // The custom handler's slots: each executed by the consumer's worker, as the handler itself recorded.
    const stamped = fs.readFileSync(effects, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { schedule: string; slot: string; worker: string; key: string });
    for (const [i, name] of names.entries()) {
      const slots = slotsOf(name, (i + 1) * 1000);
      const effectSlots = new Set(stamped.filter((s) => s.schedule === name).map((s) => Date.parse(s.slot)));
      expect([...effectSlots].sort((a, b) => a - b)).toEqual(slots);
      expect(new Set(runs[name].map((r) => r.workerId)), `${name}: run by the consumer's worker only`).toEqual(new Set([CUSTOM_WORKER]));
    }
    expect(new Set(stamped.map((s) => s.worker))).toEqual(new Set([CUSTOM_WORKER]));

    // The built-in's slots: each written to the ledger once, by a default worker (read from the table, not the API).
    const ledgerSlots = slotsOf(ledger, 1000);
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const rows = (
        await db.query<{ scheduled_for: Date; worker_id: string }>(
          "SELECT l.scheduled_for, l.worker_id FROM ledger l JOIN schedules s ON s.id = l.schedule_id WHERE s.name = $1 ORDER BY l.scheduled_for",
          [ledger],
        )
      ).rows;
      expect(rows.map((r) => r.scheduled_for.getTime())).toEqual(ledgerSlots);
      expect(rows.filter((r) => !defaultWorkers.includes(r.worker_id)), "every ledger row written by a default worker").toEqual([]);
    } finally {
      await db.end();
    }

    // 7. One run as an operator reads it: its attempt by the consumer's worker, with the handler's log line and result.
    const one = client("run", String(runs[names[0]].find((r) => r.state === "done")!.id));
    expect(one.attemptsList.map((a: { workerId: string; outcome: string }) => [a.workerId, a.outcome])).toEqual([[CUSTOM_WORKER, "succeeded"]]);
    expect(one.attemptsList[0].output.result).toEqual({ stamped: one.scheduledFor });
    expect(one.attemptsList[0].output.log).toMatchObject([{ level: "info", event: "stamp:written", msg: `stamped ${one.scheduledFor}` }]);
  } finally {
    if (worker && worker.exitCode === null) {
      worker.kill("SIGTERM");
      await new Promise((r) => worker!.once("exit", r));
    }
    await stack?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
