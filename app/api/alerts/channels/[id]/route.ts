import { deleteChannel, getChannel, parseChannelInput, updateChannel } from "@/lib/alerts/channels";
import { parseChannelId } from "@/lib/alerts/channel-id";
import { getDb } from "@/lib/server/db";
import { mutation, readJson, route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

type Params = { id: string };

export const GET = route<Params>(async (_req, { params }) => {
  const id = parseChannelId((await params).id);
  return Response.json({ channel: await getChannel(getDb(), id) });
});

/** Replace a channel's settings (the same body as create). */
export const PATCH = mutation<Params>(async (req, { params }, actor) => {
  const id = parseChannelId((await params).id);
  const input = parseChannelInput(await readJson(req));
  return Response.json({ channel: await updateChannel(getDb(), id, input, actor) });
});

/** Delete a channel; its alert history stays. */
export const DELETE = mutation<Params>(async (_req, { params }, actor) => {
  const id = parseChannelId((await params).id);
  await deleteChannel(getDb(), id, actor);
  return new Response(null, { status: 204 });
});
