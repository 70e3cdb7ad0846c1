import { z } from "zod";
import { AppError } from "../errors";
import { SCOPES } from "./scopes";

/** A schedule tag as tokens name them: 1-64 letters, digits and . _ : / - (no spaces, no commas). */
export const tagSchema = z.string().trim().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/, "tags are 1-64 letters, digits and . _ : / -");

/**
 * POST /api/tokens body: a label for the automation that holds it, its scope (read | operate |
 * admin), an optional expiry (ISO 8601 instant) and an optional restriction to schedules with at
 * least one of the given tags. Unknown fields refused.
 */
export const tokenInputSchema = z
  .object({
    name: z.string().trim().min(1, "is required").max(100, "must be at most 100 characters").regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters"),
    scope: z.enum(SCOPES, { message: "must be read, operate or admin" }),
    expiresAt: z.iso.datetime({ offset: true, message: "must be an ISO 8601 instant, e.g. 2030-01-31T00:00:00Z" }).nullable().optional(),
    scheduleTags: z.array(tagSchema).max(20, "at most 20 tags").default([]),
  })
  .strict();

export type TokenInput = z.infer<typeof tokenInputSchema>;

/** Validate a token-creation body, or throw a 400 naming the field. */
export function parseTokenInput(body: unknown): TokenInput {
  const parsed = tokenInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.code === "unrecognized_keys" ? issue.keys[0] : String(issue.path[0] ?? "body");
    throw new AppError("invalid", issue.code === "unrecognized_keys" ? `unknown field ${field}` : `${field} ${issue.message}`, field);
  }
  return { ...parsed.data, scheduleTags: [...new Set(parsed.data.scheduleTags)] };
}
