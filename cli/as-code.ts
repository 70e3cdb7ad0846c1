// `slotkeeper plan FILE`, `apply FILE`, `export`: schedules kept in a file (docs/schedules-as-code.md).
// The file's text goes to POST /api/apply as it is, so the server reads YAML and JSON the same
// way for the CLI as for any other caller, and names the entry and field of the first error.
import fs from "node:fs";
import path from "node:path";
import { Command } from "commander";
import type { PlanSummary } from "../lib/client/slotkeeper-client";
import type { Context } from "./context";
import { show } from "./output";

type ApplyFlags = { prune?: boolean; source?: string };

/** The file's text, or a usage error (exit 2) naming the file. */
function readFile(cmd: Command, file: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    cmd.error(`slotkeeper: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 2, code: "slotkeeper.file" });
  }
}

/** The plan as lines a reviewer reads: + created, ~ updated (with the fields and the version read), - deleted. */
export function describePlan(p: PlanSummary, done: boolean): string {
  const changed = new Map(p.changes.map((c) => [c.name, c]));
  const lines = [
    ...p.created.map((n) => `+ ${n}`),
    ...p.updated.map((n) => {
      const c = changed.get(n);
      return `~ ${n}${c ? `: ${c.fields.join(", ")} (version ${c.version})` : ""}`;
    }),
    ...p.deleted.map((n) => `- ${n}`),
    ...p.keptPaused.map((k) => `  ${k.name} stays paused: ${k.note}`),
  ];
  const counts = `${p.created.length} created, ${p.updated.length} updated, ${p.deleted.length} deleted, ${p.unchanged.length} unchanged`;
  lines.push(done ? `applied: ${counts}` : `plan: ${counts.replace(/created|updated|deleted/g, (w) => `to be ${w}`)}; nothing changed`);
  return lines.join("\n");
}

function applyCommand(ctx: Context, verb: "plan" | "apply"): Command {
  return new Command(verb)
    .argument("<file>", "a schedules file, YAML or JSON")
    .description(verb === "plan" ? "show what apply would change, changing nothing" : "make the schedules match the file, in one transaction")
    .option("--prune", "also delete the schedules this source manages that the file no longer lists")
    .option("--source <name>", "the name the schedules are managed by (default: the file's base name)")
    .action(async (file: string, o: ApplyFlags, cmd: Command) => {
      const text = readFile(cmd, file);
      const opts = { source: o.source ?? path.basename(file), prune: o.prune === true };
      const summary = verb === "plan" ? await ctx.client().plan(text, opts) : await ctx.client().apply(text, opts);
      show(ctx.output(), summary, () => describePlan(summary, verb === "apply"));
    });
}

/** `slotkeeper export [--file F]`: YAML on stdout (JSON with --json); to a file, JSON when its name ends in .json. */
function exportCommand(ctx: Context): Command {
  return new Command("export")
    .description("print every schedule as a file that apply accepts unchanged (secrets masked)")
    .option("--file <file>", "write it to this file instead (JSON when the name ends in .json, else YAML)")
    .action(async (o: { file?: string }, cmd: Command) => {
      const out = ctx.output();
      const json = o.file ? path.extname(o.file).toLowerCase() === ".json" : out.json;
      const text = json ? `${JSON.stringify(await ctx.client().export(), null, 2)}\n` : await ctx.client().exportYaml();
      if (!o.file) return out.out(text.replace(/\n$/, ""));
      try {
        fs.writeFileSync(o.file, text);
      } catch (err) {
        cmd.error(`slotkeeper: cannot write ${o.file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 2, code: "slotkeeper.file" });
      }
      out.err(`wrote ${o.file}`);
    });
}

export const asCodeCommands = (ctx: Context): Command[] => [applyCommand(ctx, "plan"), applyCommand(ctx, "apply"), exportCommand(ctx)];
