import { AppError } from "@/lib/errors";
import { parseScheduleInput } from "@/lib/schedules/input";
import { nameParam, scheduleResponse, webConfig } from "@/lib/schedules/http";
import { deleteSchedule, updateSchedule } from "@/lib/schedules/mutations";
import { requireScheduleByName } from "@/lib/schedules/queries";
import { getDb } from "@/lib/server/db";
import { getReadDb } from "@/lib/server/replica";
import { mutation, readJson, route } from "@/lib/server/route";
import { requireTagsInReach, scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

type Params = { name: string };

/** GET /api/schedules/{name} → { schedule } with health; 404 for unknown names. */
export const GET = route<Params>(async (_req, { params }, actor) => {
  const db = getReadDb();
  const name = await scheduleNameInReach(db, actor, (await params).name);
  return scheduleResponse(db, await requireScheduleByName(db, name));
}, { tagAware: true, reads: "replica" });

/** PATCH /api/schedules/{name} (any subset of fields plus "version") → { schedule }; 409 on a stale version. */
export const PATCH = mutation<Params>(async (req, { params }, actor) => {
  const db = getDb();
  const name = await scheduleNameInReach(db, actor, (await params).name);
  const { version, ...patch } = parseScheduleInput(await readJson(req), "patch", { payloadMaxBytes: webConfig().payloadMaxBytes });
  // A restricted token may not move a schedule out of its own reach (nor edit one into another's only).
  if ("tags" in patch) requireTagsInReach(actor, (patch as { tags?: string[] }).tags);
  return scheduleResponse(db, await updateSchedule(db, name, patch, version, actor), 200, { warn: true });
}, { tagAware: true });

/** DELETE /api/schedules/{name}?history=keep|delete (default keep) → { deleted, history } */
export const DELETE = mutation<Params>(async (req, { params }, actor) => {
  const name = await scheduleNameInReach(getDb(), actor, (await params).name);
  const history = new URL(req.url).searchParams.get("history") ?? "keep";
  if (history !== "keep" && history !== "delete") throw new AppError("invalid", "history must be keep or delete", "history");
  await deleteSchedule(getDb(), name, { keepHistory: history === "keep" }, actor);
  return Response.json({ deleted: name, history: history === "keep" ? "kept" : "deleted" });
}, { tagAware: true });
