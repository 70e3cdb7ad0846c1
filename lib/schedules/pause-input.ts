/** The optional body of POST /api/schedules/{name}/pause: `{ note?, resumeAt? }`; a 400 names the field. */
import { AppError } from "../errors";
import type { PauseHold } from "./mutations";

export function parsePauseInput(body: unknown): PauseHold {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AppError("invalid", "the body must be a JSON object", "body");
  const b = body as Record<string, unknown>;
  const extra = Object.keys(b).find((k) => k !== "note" && k !== "resumeAt");
  if (extra !== undefined) throw new AppError("invalid", `unknown field "${extra}"`, extra);
  const hold: PauseHold = {};
  if (b.note !== undefined && b.note !== null) {
    if (typeof b.note !== "string" || !b.note.trim() || b.note.length > 2000) throw new AppError("invalid", "note must be a text of 1 to 2000 characters", "note");
    hold.note = b.note.trim();
  }
  if (b.resumeAt !== undefined && b.resumeAt !== null) {
    const at = typeof b.resumeAt === "string" && /^\d{4}-\d{2}-\d{2}T/.test(b.resumeAt) ? new Date(b.resumeAt) : null;
    if (!at || Number.isNaN(at.getTime())) throw new AppError("invalid", "resumeAt must be an ISO 8601 time", "resumeAt");
    hold.resumeAt = at;
  }
  return hold;
}
