// The bench's CPU counters against /proc read here: a connection that does its work within a phase
// and closes before it ends is counted, by splitCpu with its application_name (not in `ended` with
// its whole life), by countCpu with PostgreSQL. Alone (nothing else on the server), so the workers'
// share holds only this file's connection; needs the test server on this machine, as CI's both
// servers are.
import fs from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "../../lib/testing/db";
import { waitUntil } from "../../lib/testing/wait";
import { countCpu, splitCpu } from "./procs";

const t = setupTestDatabase({ reset: false });
const clients: pg.Client[] = [];
afterAll(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
});

/** User plus system CPU seconds of a process, read from /proc (the oracle: not splitCpu's reader). */
function cpuSeconds(pid: number): number {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(")").pop()!.trim().split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** Every PostgreSQL process here, by its command name. */
function postgresPids(): number[] {
  return fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n) && readComm(n) === "postgres").map(Number);
}

function readComm(pid: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

async function backendNames(): Promise<Map<number, string>> {
  const { rows } = await t.pool.query<{ pid: number; name: string }>(`SELECT pid, application_name AS name FROM pg_stat_activity WHERE backend_type = 'client backend'`);
  return new Map(rows.map((r) => [r.pid, r.name]));
}

describe("splitCpu", () => {
  it("counts a worker's connection that closed within the phase with the workers, up to its last reading", async () => {
    const client = new pg.Client({ connectionString: t.url, application_name: "slotkeeper:worker-split-test" });
    clients.push(client);
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const pid = rows[0].pid;
    let samples = 0;
    const end = await splitCpu([], backendNames, { onSample: () => samples++ });
    const atStart = cpuSeconds(pid);
    // About half a second of one backend's CPU.
    await client.query("SELECT count(*) FROM generate_series(1, 4000000)");
    const burned = cpuSeconds(pid) - atStart;
    // Two readings after the work, so the last one before the close has all of it.
    const seen = samples;
    await waitUntil(() => samples >= seen + 2, 10_000, "two CPU readings after the work");
    await client.end();
    await waitUntil(() => !fs.existsSync(`/proc/${pid}`), 10_000, "the backend to exit");
    const split = await end();
    expect(burned).toBeGreaterThan(0.1);
    // Other test files' workers may add to this share, never take from it; 2 ticks of /proc's slack.
    expect(split.coreSeconds.database.workers).toBeGreaterThanOrEqual(burned - 0.02);
  });
});

describe("countCpu", () => {
  it("counts a connection opened and closed within the phase with PostgreSQL", async () => {
    const count = countCpu([]);
    // The server's other processes, read after countCpu's first reading and before its last: what
    // they used in between is at most what countCpu counts for them (the counters only grow).
    const others = postgresPids();
    const othersAtStart = new Map(others.map((p) => [p, cpuSeconds(p)]));
    const client = new pg.Client({ connectionString: t.url, application_name: "slotkeeper:bench-count-test" });
    clients.push(client);
    await client.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    const pid = rows[0].pid;
    await client.query("SELECT count(*) FROM generate_series(1, 4000000)");
    // Its whole life is within the phase.
    const burned = cpuSeconds(pid);
    await client.end();
    await waitUntil(() => !fs.existsSync(`/proc/${pid}`), 10_000, "the backend to exit");
    let othersUsed = 0;
    for (const p of postgresPids()) if (othersAtStart.has(p)) othersUsed += cpuSeconds(p) - othersAtStart.get(p)!;
    // One "run": the figure is the phase's PostgreSQL CPU in microseconds.
    const { databaseMicros } = count(1);
    expect(burned).toBeGreaterThan(0.1);
    expect(databaseMicros!).toBeGreaterThanOrEqual((othersUsed + burned) * 1e6 - 1);
  });
});
