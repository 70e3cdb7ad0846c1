import { z } from "zod";
import { AppError } from "../errors";
import { AUDIT_PAGE_MAX, type AuditFilter } from "./queries";

const instant = z.string().max(64).refine((s) => !Number.isNaN(Date.parse(s)), "must be an ISO 8601 instant").transform((s) => new Date(s));

/** GET /api/audit's (and a schedule's audit) query parameters. */
export const auditQuerySchema = z
  .object({
    schedule: z.string().min(1).max(200).optional(),
    actor: z.string().min(1).max(200).optional(),
    action: z.string().min(1).max(100).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: z.coerce.number().int().positive().optional(),
    limit: z.coerce.number().int().min(1).max(AUDIT_PAGE_MAX).optional(),
  })
  .strict();

/** Parse GET /api/audit's query string; unknown or malformed parameters are a 400 naming the field. */
export function parseAuditQuery(params: URLSearchParams): AuditFilter {
  const raw: Record<string, string> = {};
  for (const [k, v] of params) if (v !== "") raw[k] = v;
  const parsed = auditQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.code === "unrecognized_keys" ? issue.keys[0] : String(issue.path[0] ?? "query");
    throw new AppError("invalid", issue.code === "unrecognized_keys" ? `unknown query parameter ${field}` : `${field}: ${issue.message}`, field);
  }
  return parsed.data;
}
