import { createChannel, listChannels, parseChannelInput } from "@/lib/alerts/channels";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/server/db";
import { mutation, readJson, route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Every notification channel, and whether e-mail can be sent (SLOTKEEPER_SMTP_URL set). */
export const GET = route(async () => Response.json({ channels: await listChannels(getDb()), smtpConfigured: Boolean(loadConfig().smtpUrl) }));

/** Create a channel: `{ name, kind: "webhook" | "slack" | "email", config: { url } | { to: [...] }, enabled }`. */
export const POST = mutation(async (req, _ctx, actor) => {
  const input = parseChannelInput(await readJson(req));
  return Response.json({ channel: await createChannel(getDb(), input, actor) }, { status: 201 });
});
