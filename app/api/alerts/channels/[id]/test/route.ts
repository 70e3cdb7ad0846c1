import { getChannel } from "@/lib/alerts/channels";
import { parseChannelId } from "@/lib/alerts/channel-id";
import { sendTestNotification } from "@/lib/alerts/test-send";
import { recordAudit } from "@/lib/audit/record";
import { loadConfig } from "@/lib/config";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Send a sample notification to the channel now; answers `{ ok }` or `{ ok: false, error }` (the receiver's reason). */
export const POST = mutation<{ id: string }>(async (_req, { params }, actor) => {
  const db = getDb();
  const channel = await getChannel(db, parseChannelId((await params).id));
  const result = await sendTestNotification(db, channel, loadConfig());
  // A test send reaches outside the installation: who sent one, to which channel, and what came back.
  await recordAudit(db, actor, { action: "channel.test", targetType: "channel", targetId: channel.id, after: result });
  return Response.json(result);
});
