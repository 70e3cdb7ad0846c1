// The `slotkeeper` CLI (entry: cli/main.ts): the console's JSON API from a terminal (docs/cli.md). It talks to SLOTKEEPER_URL
// (default http://localhost:3000) with SLOTKEEPER_TOKEN as a bearer token when set, through the
// typed client (lib/client/slotkeeper-client.ts). Exit codes: 0 done, 1 the API refused or
// failed, 2 a usage error.
import { Command, CommanderError } from "commander";
import { createClient, SlotkeeperApiError, type SlotkeeperClient } from "../lib/client/slotkeeper-client";
import { asCodeCommands } from "./as-code";
import type { Context } from "./context";
import type { Output } from "./output";
import { peopleCommand } from "./people";
import { runsCommand } from "./runs";
import { tokensCommand } from "./tokens";
import { schedulesCommand } from "./schedules";
import { workersCommand } from "./workers";

export const EXIT = { ok: 0, api: 1, usage: 2 } as const;

type Io = { stdout: (s: string) => void; stderr: (s: string) => void; env: Record<string, string | undefined>; stdin?: () => Promise<string> };

/** Run the CLI on `argv` (without node and the script); resolves with the exit code. */
export async function runCli(argv: string[], io: Io): Promise<number> {
  const program = new Command("slotkeeper")
    .description("Operate a Slotkeeper console from the command line")
    .option("--json", "print the API's JSON answer instead of a table")
    .option("--url <url>", "the console's address (default: SLOTKEEPER_URL, else http://localhost:3000)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s.replace(/\n$/, "")), writeErr: (s) => io.stderr(s.replace(/\n$/, "")) })
    .showHelpAfterError("(add --help for usage)");
  let client: SlotkeeperClient | undefined;
  const globals = () => program.opts<{ json?: boolean; url?: string }>();
  const ctx: Context = {
    client: () => (client ??= createClient({ url: globals().url ?? io.env.SLOTKEEPER_URL, token: io.env.SLOTKEEPER_TOKEN || undefined })),
    output: (): Output => ({ out: io.stdout, err: io.stderr, json: globals().json === true }),
    stdin: io.stdin ?? (async () => ""),
  };
  for (const sub of [schedulesCommand(ctx), runsCommand(ctx), workersCommand(ctx), peopleCommand(ctx), tokensCommand(ctx), ...asCodeCommands(ctx)]) program.addCommand(inherit(sub, program));
  try {
    await program.parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) return err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (err instanceof SlotkeeperApiError) {
      io.stderr(`slotkeeper: ${err.message}${err.field ? ` (field: ${err.field})` : ""} [${err.status} ${err.code}]`);
      return EXIT.api;
    }
    const base = globals().url ?? io.env.SLOTKEEPER_URL ?? "http://localhost:3000";
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : "";
    io.stderr(`slotkeeper: ${err instanceof Error ? err.message : String(err)}${cause} (console at ${base})`);
    return EXIT.api;
  }
}

/** Subcommands added with addCommand do not copy the program's settings: exit and output go through it. */
function inherit(cmd: Command, from: Command): Command {
  cmd.copyInheritedSettings(from);
  for (const c of cmd.commands) inherit(c, cmd);
  return cmd;
}

