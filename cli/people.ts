// `slotkeeper people list|add|set`: accounts per person (docs/access.md#people), admins only.
// A password never goes on the command line (shell history, the process list): it is read from
// standard input with --password-stdin, as `docker login` does.
import { Command, Option } from "commander";
import type { PersonView } from "../lib/client/slotkeeper-client";
import type { Context } from "./context";
import { show, table } from "./output";

const ROLES = ["viewer", "operator", "admin"];

/** The first line of standard input, or a usage error when it is empty. */
async function passwordFromStdin(ctx: Context, cmd: Command): Promise<string> {
  const line = (await ctx.stdin()).split(/\r?\n/)[0] ?? "";
  if (!line) cmd.error("slotkeeper: --password-stdin read no password (pipe one in: printf '%s' \"$PW\" | slotkeeper …)", { exitCode: 2, code: "slotkeeper.password" });
  return line;
}

const line = (p: PersonView) => `${p.name} (${p.role}${p.disabledAt ? ", disabled" : ""})`;

export function peopleCommand(ctx: Context): Command {
  const cmd = new Command("people").description("accounts per person: list, add, change (admins only)");

  cmd
    .command("list")
    .description("every person, by name")
    .action(async () => {
      const people = await ctx.client().listPeople();
      show(ctx.output(), { people }, () =>
        people.length
          ? table(people, [
              { header: "NAME", value: (p: PersonView) => p.name },
              { header: "DISPLAY NAME", value: (p) => p.displayName },
              { header: "ROLE", value: (p) => p.role },
              { header: "STATUS", value: (p) => (p.disabledAt ? "disabled" : "active") },
              { header: "CREATED", value: (p) => p.createdAt },
            ])
          : "no people",
      );
    });

  cmd
    .command("add <name>")
    .description("add a person; the password is read from standard input")
    .addOption(new Option("--role <role>", "what they may do").choices(ROLES).makeOptionMandatory())
    .option("--display-name <text>", "the name shown in the console and the audit log")
    .requiredOption("--password-stdin", "read the password from standard input")
    .action(async (name: string, o: { role: string; displayName?: string }, c: Command) => {
      const person = await ctx.client().addPerson({ name, role: o.role, displayName: o.displayName, password: await passwordFromStdin(ctx, c) });
      show(ctx.output(), { person }, () => `added ${line(person)}`);
    });

  cmd
    .command("set <name>")
    .description("change a person's role or display name, reset their password, disable or enable them (a reset or a disable ends their sessions)")
    .addOption(new Option("--role <role>", "a new role").choices(ROLES))
    .option("--display-name <text>", "a new display name (\"\" clears it)")
    .option("--password-stdin", "reset the password to the one read from standard input")
    .addOption(new Option("--disable", "refuse their sign-in and end their sessions").conflicts("enable"))
    .option("--enable", "let them sign in again")
    .action(async (name: string, o: { role?: string; displayName?: string; passwordStdin?: boolean; disable?: boolean; enable?: boolean }, c: Command) => {
      const patch = {
        ...(o.role ? { role: o.role } : {}),
        ...(o.displayName !== undefined ? { displayName: o.displayName } : {}),
        ...(o.passwordStdin ? { password: await passwordFromStdin(ctx, c) } : {}),
        ...(o.disable ? { disabled: true } : o.enable ? { disabled: false } : {}),
      };
      if (Object.keys(patch).length === 0) c.error("slotkeeper: give at least one of --role, --display-name, --password-stdin, --disable, --enable", { exitCode: 2, code: "slotkeeper.nothing" });
      const person = await ctx.client().updatePerson(name, patch);
      show(ctx.output(), { person }, () => `changed ${line(person)}`);
    });

  return cmd;
}
