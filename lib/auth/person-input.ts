import { z } from "zod";
import { AppError } from "../errors";
import { ROLES } from "./scopes";
import { ACCOUNTS } from "./passwords";

/** Shortest password a person may choose. */
export const MIN_PASSWORD_LENGTH = 12;

/**
 * Login names: 1-64 letters, digits and . _ @ -, starting with a letter or digit. No colon, so a
 * person's name in the audit log never looks like a token's (`token:…`); the environment accounts'
 * names and the log's own actors are reserved.
 */
const RESERVED = new Set<string>([...ACCOUNTS, "local", "system"]);
export const personNameSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "must be 1-64 letters, digits and . _ @ -, starting with a letter or digit")
  .refine((n) => !RESERVED.has(n.toLowerCase()), "is reserved (operator and viewer are the environment accounts)");

const passwordSchema = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(1024, "must be at most 1024 characters");
const displayNameSchema = z
  .string()
  .trim()
  .max(100, "must be at most 100 characters")
  .regex(/^[^\u0000-\u001f\u007f]*$/, "must not contain control characters")
  .transform((s) => (s === "" ? null : s));
const roleSchema = z.enum(ROLES, { message: "must be viewer, operator or admin" });

/** POST /api/people body. Unknown fields refused. */
export const personInputSchema = z.object({ name: personNameSchema, displayName: displayNameSchema.nullable().optional(), role: roleSchema, password: passwordSchema }).strict();
export type PersonInput = z.infer<typeof personInputSchema>;

/** PATCH /api/people/{name} body: any of role, displayName, password (a reset), disabled. */
export const personPatchSchema = z
  .object({ role: roleSchema.optional(), displayName: displayNameSchema.nullable().optional(), password: passwordSchema.optional(), disabled: z.boolean({ message: "must be true or false" }).optional() })
  .strict()
  .refine((p) => Object.keys(p).length > 0, { message: "give at least one of role, displayName, password, disabled", path: ["body"] });
export type PersonPatch = z.infer<typeof personPatchSchema>;

/** POST /api/me/password body. */
export const passwordChangeSchema = z.object({ currentPassword: z.string().min(1, "is required").max(1024), newPassword: passwordSchema }).strict();
export type PasswordChange = z.infer<typeof passwordChangeSchema>;

/** Validate a body against a schema, or throw a 400 naming the field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.code === "unrecognized_keys" ? issue.keys[0] : String(issue.path[0] ?? "body");
    throw new AppError("invalid", issue.code === "unrecognized_keys" ? `unknown field ${field}` : `${field} ${issue.message}`, field);
  }
  return parsed.data;
}
