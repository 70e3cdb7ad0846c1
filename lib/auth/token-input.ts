import { z } from "zod";
import { AppError } from "../errors";

/** POST /api/tokens body: a label for the automation that holds it, and its role. Unknown fields refused. */
export const tokenInputSchema = z
  .object({
    name: z.string().trim().min(1, "is required").max(100, "must be at most 100 characters").regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters"),
    role: z.enum(["viewer", "operator"]),
  })
  .strict();

/** Validate a token-creation body, or throw a 400 naming the field. */
export function parseTokenInput(body: unknown): z.infer<typeof tokenInputSchema> {
  const parsed = tokenInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.code === "unrecognized_keys" ? issue.keys[0] : String(issue.path[0] ?? "body");
    throw new AppError("invalid", issue.code === "unrecognized_keys" ? `unknown field ${field}` : `${field} ${issue.message}`, field);
  }
  return parsed.data;
}
