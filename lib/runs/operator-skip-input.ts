import { z } from "zod";
import { AppError } from "../errors";

/** The most an operator's reason for cancelling or discarding a run may hold. */
export const SKIP_REASON_MAX_CHARS = 500;

/** The optional body of POST /api/runs/{id}/cancel and /discard. */
export const operatorSkipBodySchema = z
  .object({
    reason: z
      .string({ error: "reason must be a string" })
      .trim()
      .min(1, { error: "reason must not be empty (leave it out instead)" })
      .max(SKIP_REASON_MAX_CHARS, { error: `reason must be at most ${SKIP_REASON_MAX_CHARS} characters` })
      .optional(),
  })
  .strict();

/** The body of POST /api/runs/{id}/cancel and /discard: `{ reason? }`, or none at all. 400 naming the field otherwise. */
export function parseOperatorSkipBody(raw: unknown): { reason: string | null } {
  const parsed = operatorSkipBodySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue.code === "unrecognized_keys") throw new AppError("invalid", `unknown field "${issue.keys[0]}"; the body is { reason? }`, issue.keys[0]);
    const field = issue.path.join(".") || "body";
    throw new AppError("invalid", field === "body" ? "the body must be a JSON object { reason? }" : issue.message, field);
  }
  return { reason: parsed.data.reason ?? null };
}

/** The run id of a `[id]` route: a positive integer, else 400 on `id`. */
export function runIdParam(raw: string): number {
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1 || !/^\d+$/.test(raw)) throw new AppError("invalid", `run id must be a positive integer, got ${JSON.stringify(raw)}`, "id");
  return id;
}
