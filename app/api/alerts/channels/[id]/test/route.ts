import { getChannel } from "@/lib/alerts/channels";
import { parseChannelId } from "@/lib/alerts/channel-id";
import { sendTestNotification } from "@/lib/alerts/test-send";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Send a sample notification to the channel now; answers `{ ok }` or `{ ok: false, error }` (the receiver's reason). */
export const POST = mutation<{ id: string }>(async (_req, { params }) => {
  const channel = await getChannel(getDb(), parseChannelId((await params).id));
  return Response.json(await sendTestNotification(getDb(), channel, loadConfig()));
});
