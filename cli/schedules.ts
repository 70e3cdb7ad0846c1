import { Command, Option } from "commander";
import type { Schedule } from "../lib/client/slotkeeper-client";
import { type Context, jsonObject, positiveInt } from "./context";
import { keyValues, show, table, timing } from "./output";

const COLUMNS = [
  { header: "NAME", value: (s: Schedule) => s.name },
  { header: "HANDLER", value: (s: Schedule) => s.handler },
  { header: "TIMING", value: (s: Schedule) => timing(s) },
  { header: "STATUS", value: (s: Schedule) => s.status ?? (s.enabled ? "" : "paused") },
  { header: "DEAD", value: (s: Schedule) => s.deadRuns, align: "right" as const },
  { header: "NEXT SLOT", value: (s: Schedule) => s.nextSlotAt },
];

function details(s: Schedule): string {
  return keyValues([
    ["name", s.name],
    ["handler", s.handler],
    ["timing", timing(s)],
    ["enabled", s.enabled],
    ["paused note", s.pausedNote],
    ["resumes at", s.resumeAt],
    ["status", s.status],
    ["next slot", s.nextSlotAt],
    ["catch-up", s.catchUp],
    ["overlap", s.overlap],
    ["retry", `${s.retry.maxAttempts} attempts, ${s.retry.baseSeconds}s base, ${s.retry.capSeconds}s cap`],
    ["lease", `${s.leaseSeconds}s`],
    ["timeout", s.timeoutSeconds == null ? null : `${s.timeoutSeconds}s`],
    ["dead runs", s.deadRuns],
    ["stuck since", s.stuck ? s.stuckSince : null],
    ["since last success", s.sinceLastSuccessSeconds === undefined || s.sinceLastSuccessSeconds === null ? null : `${s.sinceLastSuccessSeconds}s`],
    ["tags", s.tags],
    ["owner", s.owner],
    ["description", s.description],
    ["version", s.version],
  ]);
}

/** `slotkeeper schedules list|get|pause|resume|run-now|backfill|delete`. */
export function schedulesCommand(ctx: Context): Command {
  const cmd = new Command("schedules").description("list, inspect and operate schedules");

  cmd
    .command("list")
    .description("list schedules with their health (every page)")
    .option("--search <text>", "only names containing this")
    .addOption(new Option("--enabled", "only enabled schedules").conflicts("paused"))
    .option("--paused", "only paused schedules")
    .option("--tag <tag>", "only schedules with this tag")
    .option("--owner <owner>", "only schedules of this owner")
    .option("--limit <n>", "at most this many", positiveInt)
    .action(async (o: { search?: string; enabled?: boolean; paused?: boolean; tag?: string; owner?: string; limit?: number }) => {
      const enabled = o.enabled ? true : o.paused ? false : undefined;
      const all: Schedule[] = [];
      let cursor: string | undefined;
      do {
        const page = await ctx.client().listSchedules({ search: o.search, enabled, tag: o.tag, owner: o.owner, limit: o.limit ? Math.min(o.limit - all.length, 500) : 500, cursor });
        all.push(...page.schedules);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && (!o.limit || all.length < o.limit));
      show(ctx.output(), { schedules: all }, () => (all.length ? table(all, COLUMNS) : "no schedules"));
    });

  cmd
    .command("get <name>")
    .description("one schedule: its definition and health")
    .action(async (name: string) => {
      const s = await ctx.client().getSchedule(name);
      show(ctx.output(), { schedule: s }, () => details(s));
    });

  cmd
    .command("pause <name>")
    .description("stop a schedule's slots from running")
    .option("--note <text>", "why: a paused schedule with a note stays paused when its file is applied again")
    .option("--resume-at <instant>", "when a worker resumes it (ISO 8601, in the future)")
    .action(async (name: string, o: { note?: string; resumeAt?: string }) => {
      const s = await ctx.client().pauseSchedule(name, { note: o.note, resumeAt: o.resumeAt });
      show(ctx.output(), { schedule: s }, () => `paused ${s.name}${s.resumeAt ? ` until ${s.resumeAt}` : ""}${s.pausedNote ? `: ${s.pausedNote}` : ""}`);
    });

  cmd
    .command("resume <name>")
    .description("let a paused schedule run again (its catch-up policy decides the missed slots)")
    .action(async (name: string) => {
      const s = await ctx.client().resumeSchedule(name);
      show(ctx.output(), { schedule: s }, () => `resumed ${s.name}`);
    });

  cmd
    .command("run-now <name>")
    .description("start a manual run now")
    .option("--payload <json>", "this run's payload, a JSON object, in place of the schedule's", jsonObject)
    .action(async (name: string, o: { payload?: Record<string, unknown> }) => {
      const run = await ctx.client().runNow(name, { payload: o.payload });
      show(ctx.output(), { run }, () => `run ${run.id} of ${name} queued for ${run.scheduledFor}`);
    });

  cmd
    .command("backfill <name>")
    .description("make a run for every slot in [from, to] that has none")
    .requiredOption("--from <instant>", "the first slot (ISO 8601)")
    .requiredOption("--to <instant>", "the last slot (ISO 8601)")
    .option("--dry-run", "only count what would be made")
    .action(async (name: string, o: { from: string; to: string; dryRun?: boolean }) => {
      const r = await ctx.client().backfill(name, { from: o.from, to: o.to, dryRun: o.dryRun === true });
      show(ctx.output(), r, () =>
        r.dryRun ? `${r.slots} slots, ${r.existing} already have a run: a backfill would create ${r.wouldCreate ?? 0}` : `${r.slots} slots, ${r.existing} already had a run: created ${r.created}`,
      );
    });

  cmd
    .command("delete <name>")
    .description("delete a schedule; its runs stay readable unless --history delete")
    .addOption(new Option("--history <what>", "keep or delete its runs").choices(["keep", "delete"]).default("keep"))
    .action(async (name: string, o: { history: "keep" | "delete" }) => {
      const r = await ctx.client().deleteSchedule(name, { history: o.history });
      show(ctx.output(), r, () => `deleted ${r.deleted} (history ${r.history})`);
    });

  return cmd;
}
