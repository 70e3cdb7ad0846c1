import { Command } from "commander";
import type { RunDetail, RunPage } from "../lib/client/slotkeeper-client";
import { type Context, positiveInt, runId } from "./context";
import { keyValues, show, table } from "./output";

type Run = RunPage["runs"][number];

const COLUMNS = [
  { header: "ID", value: (r: Run) => r.id, align: "right" as const },
  { header: "SCHEDULE", value: (r: Run) => r.scheduleName },
  { header: "SLOT", value: (r: Run) => r.scheduledFor },
  { header: "STATE", value: (r: Run) => r.state },
  { header: "ORIGIN", value: (r: Run) => r.origin },
  { header: "ATTEMPTS", value: (r: Run) => `${r.attempts}/${r.maxAttempts}`, align: "right" as const },
  { header: "WORKER", value: (r: Run) => r.leaseOwner ?? r.workerId },
  { header: "NOTE", value: (r: Run) => (r.state === "skipped" ? r.skipReason : r.lastError) },
];

function details(r: RunDetail): string {
  const head = keyValues([
    ["id", r.id],
    ["schedule", `${r.scheduleName}${r.scheduleDeleted ? " (deleted)" : ""}`],
    ["slot", r.scheduledFor],
    ["state", r.state],
    ["skip reason", r.skipReason],
    ["origin", r.origin],
    ["attempts", `${r.attempts}/${r.maxAttempts}`],
    ["due", r.dueAt],
    ["started", r.startedAt],
    ["finished", r.finishedAt],
    ["last error", r.lastError],
    ["idempotency key", r.idempotencyKey],
  ]);
  if (r.attemptsList.length === 0) return head;
  const attempts = table(r.attemptsList, [
    { header: "ATTEMPT", value: (a) => a.attempt, align: "right" },
    { header: "WORKER", value: (a) => a.workerId },
    { header: "STARTED", value: (a) => a.startedAt },
    { header: "OUTCOME", value: (a) => a.outcome },
    { header: "MS", value: (a) => a.durationMs, align: "right" },
    { header: "ERROR", value: (a) => a.error },
  ]);
  return `${head}\n\n${attempts}`;
}

/** `slotkeeper runs list|get|requeue|cancel|discard`. */
export function runsCommand(ctx: Context): Command {
  const cmd = new Command("runs").description("list, inspect and settle runs");

  cmd
    .command("list")
    .description("runs, newest slot first (one page; --cursor for the next)")
    .option("--state <states>", "only these states, comma-separated (pending, running, done, dead, skipped)")
    .option("--schedule <name>", "only this schedule's runs")
    .option("--from <instant>", "slots at or after this (ISO 8601)")
    .option("--to <instant>", "slots before this (ISO 8601)")
    .option("--limit <n>", "runs per page (at most 200)", positiveInt)
    .option("--cursor <cursor>", "the nextCursor of the previous page")
    .action(async (o: { state?: string; schedule?: string; from?: string; to?: string; limit?: number; cursor?: string }) => {
      const page = await ctx.client().listRuns({ state: o.state?.split(","), schedule: o.schedule, from: o.from, to: o.to, limit: o.limit, cursor: o.cursor });
      show(ctx.output(), page, () => {
        const text = page.runs.length ? table(page.runs, COLUMNS) : "no runs";
        return page.nextCursor ? `${text}\nmore: --cursor ${page.nextCursor}` : text;
      });
    });

  cmd
    .command("get")
    .description("one run with its attempts")
    .argument("<id>", "run id", runId)
    .action(async (id: number) => {
      const run = await ctx.client().getRun(id);
      show(ctx.output(), { run }, () => details(run));
    });

  cmd
    .command("requeue")
    .description("put a dead run back to pending, due now")
    .argument("<id>", "run id", runId)
    .action(async (id: number) => {
      const r = await ctx.client().requeueRun(id);
      show(ctx.output(), r, () => `run ${id} re-queued`);
    });

  for (const verb of ["cancel", "discard"] as const) {
    cmd
      .command(verb)
      .description(verb === "cancel" ? "cancel a pending run no worker has started" : "discard a dead run (its schedule stops failing)")
      .argument("<id>", "run id", runId)
      .option("--reason <text>", "why, for the audit log")
      .action(async (id: number, o: { reason?: string }) => {
        const run = verb === "cancel" ? await ctx.client().cancelRun(id, { reason: o.reason }) : await ctx.client().discardRun(id, { reason: o.reason });
        show(ctx.output(), { run }, () => `run ${id} ${run.skipReason}`);
      });
  }
  return cmd;
}
