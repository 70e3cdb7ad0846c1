// `slotkeeper tokens list|create|revoke`: API tokens (docs/access.md#api-tokens), admins only.
import { Command, InvalidArgumentError, Option } from "commander";
import type { TokenView } from "../lib/client/slotkeeper-client";
import type { Context } from "./context";
import { keyValues, show, table } from "./output";

function tokenId(raw: string): number {
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) throw new InvalidArgumentError("a token id is a positive integer");
  return Number(raw);
}

const collect = (v: string, all: string[]) => [...all, v];

export function tokensCommand(ctx: Context): Command {
  const cmd = new Command("tokens").description("API tokens: list, create, revoke (admins only)");

  cmd
    .command("list")
    .description("every token (never its secret), newest first")
    .action(async () => {
      const tokens = await ctx.client().listTokens();
      show(ctx.output(), { tokens }, () =>
        tokens.length
          ? table(tokens, [
              { header: "ID", value: (t: TokenView) => t.id, align: "right" },
              { header: "NAME", value: (t) => t.name },
              { header: "SCOPE", value: (t) => t.scope },
              { header: "TAGS", value: (t) => t.scheduleTags },
              { header: "EXPIRES", value: (t) => t.expiresAt },
              { header: "LAST USED", value: (t) => t.lastUsedAt },
              { header: "STATUS", value: (t) => (t.revokedAt ? "revoked" : t.expiresAt && t.expiresAt <= new Date().toISOString() ? "expired" : "active") },
            ])
          : "no tokens",
      );
    });

  cmd
    .command("create <name>")
    .description("make a token; its secret is printed this once")
    .addOption(new Option("--scope <scope>", "what it may do").choices(["read", "operate", "admin"]).makeOptionMandatory())
    .option("--expires <instant>", "when it stops working (ISO 8601)")
    .option("--tag <tag>", "only schedules with this tag (repeat for more)", collect, [] as string[])
    .action(async (name: string, o: { scope: string; expires?: string; tag: string[] }) => {
      const r = await ctx.client().createToken({ name, scope: o.scope, expiresAt: o.expires ?? null, scheduleTags: o.tag });
      show(ctx.output(), r, () =>
        [keyValues([["id", r.tokenInfo.id], ["name", r.tokenInfo.name], ["scope", r.tokenInfo.scope], ["tags", r.tokenInfo.scheduleTags], ["expires", r.tokenInfo.expiresAt]]), "", r.token, "", "(the secret above is shown this once)"].join("\n"),
      );
    });

  cmd
    .command("revoke")
    .argument("<id>", "the token's id (tokens list)", tokenId)
    .description("stop a token working at once (its row stays for the record)")
    .action(async (id: number) => {
      const t = await ctx.client().revokeToken(id);
      show(ctx.output(), { tokenInfo: t }, () => `revoked token ${t.id} (${t.name})`);
    });

  return cmd;
}
