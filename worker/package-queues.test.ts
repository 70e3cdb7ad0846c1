import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { startReceiver, type Received } from "../lib/testing/receiver";
import { readRun, waitForRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";
import { listWorkers } from "../lib/workers/queries";

// `runWorker({ queues })` as a team bringing its own code uses it: a plain .mjs in a folder outside
// the repository imports `slotkeeper/worker` (the package's ESM bundle, built as
// scripts/build-package.ts builds it, under node_modules/slotkeeper with the package's exports),
// defines its own handler registry and serves only the `reports` queue. Another worker serves
// `default` with the same handler name. The receiver, outside the product, records which process
// ran which run: the reports runs ran on the team's worker only, the default ones on the other
// worker only, and a run of a queue neither serves waits pending with no attempt used.
const ROOT = path.resolve(import.meta.dirname, "..");
const T0 = new Date("2030-01-01T10:00:00Z");
const HOLD_MS = 200;
const t = setupTestDatabase({ clock: T0 });
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let project: string;

const TEAM_WORKER_MJS = `
import { defineHandler, runWorker } from "slotkeeper/worker";

const report = defineHandler({
  name: "report",
  idempotent: true,
  description: "The team's own report: tells the receiver which process ran which run.",
  async run(ctx) {
    const res = await fetch(process.env.RECEIVER, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ handler: "report", workerId: ctx.workerId, runId: ctx.runId, from: "team-package" }),
    });
    if (!res.ok) throw new Error("receiver answered " + res.status);
  },
});

// The queues option overrides SLOTKEEPER_QUEUES, which this process is also given.
const worker = await runWorker({ handlers: [report], queues: { reports: 2 } });
process.on("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
`;

beforeAll(async () => {
  receiver = await startReceiver(() => 200, { holdMs: HOLD_MS });
  // The project, outside the repository: node_modules/slotkeeper holds the package as npm would
  // install it (package.json with its exports, dist/, drizzle/) and its dependencies.
  project = fs.mkdtempSync(path.join(os.tmpdir(), "sk-team-"));
  const pkg = path.join(project, "node_modules", "slotkeeper");
  fs.mkdirSync(path.join(pkg, "dist"), { recursive: true });
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { name: string; version: string; exports: unknown };
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: manifest.name, version: manifest.version, exports: manifest.exports }));
  await build({
    absWorkingDir: ROOT,
    entryPoints: { worker: "worker/package.ts" },
    outdir: path.join(pkg, "dist"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    tsconfig: path.join(ROOT, "tsconfig.json"),
    logLevel: "warning",
  });
  fs.writeFileSync(path.join(pkg, "dist", "package.json"), JSON.stringify({ type: "module" }));
  fs.symlinkSync(path.join(ROOT, "drizzle"), path.join(pkg, "drizzle"));
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(pkg, "node_modules"));
  fs.writeFileSync(path.join(project, "worker.mjs"), TEAM_WORKER_MJS);
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  if (project) fs.rmSync(project, { recursive: true, force: true });
});

type Call = { handler: string; workerId: string; runId: number; from?: string };
const call = (r: Received) => r.body as Call;

/** The most intervals open at one instant. */
function maxOverlap(calls: Received[]): number {
  const edges = calls.flatMap((c) => [[c.arrivedAt, 1], [c.answeredAt!, -1]] as [number, number][]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  return most;
}

describe("runWorker({ queues }) from another project", () => {
  it("the team's worker takes only its queue's runs, another worker takes the rest, an unserved queue waits", async () => {
    const due = (n: number) => slots(T0.getTime() - n * 1000, n, 1000).map((d) => ({ scheduledFor: d }));
    const reports = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "team-reports", handler: "report", queue: "reports" })).id;
    const general = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "general", handler: "report" })).id;
    const orphan = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "billing", handler: "report", queue: "billing" })).id;
    const ids = { reports: await makeRuns(t.db, reports, due(10)), general: await makeRuns(t.db, general, due(10)), billing: await makeRuns(t.db, orphan, due(2)) };

    const [team] = await startWorkers(t.url, ["team-worker"], { RECEIVER: receiver.url, SLOTKEEPER_QUEUES: "default:5,billing:1" }, { cwd: project, script: "worker.mjs", plain: true });
    const [other] = await startWorkers(t.url, ["default-worker"], { SK_TEST_HANDLERS: "report", SK_TEST_RECEIVER: receiver.url, SLOTKEEPER_QUEUES: "default:4" }, { script: "lib/testing/handler-worker.ts" });

    // What the Workers page shows: the team's worker serves `reports` at 2 (the option, not the environment).
    const listed = new Map((await listWorkers(t.db)).map((w) => [w.id, w]));
    expect(listed.get(team.id)!.queues.map((q) => [q.name, q.concurrency])).toEqual([["reports", 2]]);
    expect(listed.get(team.id)!.handlers.map((h) => h.name)).toContain("report");
    expect(listed.get(other.id)!.queues.map((q) => [q.name, q.concurrency])).toEqual([["default", 4]]);

    for (const id of [...ids.reports, ...ids.general]) await waitForRun(t.pool, id, (r) => r.state === "done", 60_000);
    const calls = receiver.received;
    const ranOn = (list: number[]) => [...new Set(calls.filter((r) => list.includes(call(r).runId)).map((r) => call(r).workerId))];
    expect(ranOn(ids.reports)).toEqual([team.id]);
    expect(calls.filter((r) => ids.reports.includes(call(r).runId)).every((r) => call(r).from === "team-package")).toBe(true);
    expect(ranOn(ids.general)).toEqual([other.id]);
    // Each run ran once; the team's worker never had more than its queue's 2 in flight.
    expect(calls.map((r) => call(r).runId).sort((a, b) => a - b)).toEqual([...ids.reports, ...ids.general].sort((a, b) => a - b));
    expect(maxOverlap(calls.filter((r) => call(r).workerId === team.id))).toBeLessThanOrEqual(2);
    // The billing queue: neither worker serves it (the team's SLOTKEEPER_QUEUES named it, the option replaced it).
    for (const id of ids.billing) expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 0 });
  }, 120_000);
});
