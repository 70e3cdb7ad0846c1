import { z } from "zod";

/** Kinds of domain error; `toResponse` maps each to one HTTP status. */
export type AppErrorKind = "invalid" | "not_found" | "conflict" | "forbidden" | "unauthorized" | "unavailable" | "too_large";

const STATUS: Record<AppErrorKind, number> = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unavailable: 503,
};

/** Every `code` an error answer can carry (`rate_limited`: too many failed sign-ins, lib/auth/login.ts; `internal`: anything unexpected). */
export const ERROR_CODES = ["validation", "unauthorized", "forbidden", "not_found", "conflict", "too_large", "unavailable", "rate_limited", "internal"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const CODE: Record<AppErrorKind, ErrorCode> = {
  invalid: "validation",
  unauthorized: "unauthorized",
  forbidden: "forbidden",
  not_found: "not_found",
  conflict: "conflict",
  too_large: "too_large",
  unavailable: "unavailable",
};

/** An error the user can act on: its message is shown as is, `field` names the input at fault. */
export class AppError extends Error {
  constructor(
    readonly kind: AppErrorKind,
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  get status(): number {
    return STATUS[this.kind];
  }
}

/** The one error body of the API: `{ error: { code, message, field } }` (the OpenAPI document's `Error`). */
export const errorBodySchema = z
  .object({
    error: z
      .object({
        code: z.enum(ERROR_CODES),
        message: z.string(),
        /** The input at fault, as a dotted path (`cron`, `retry.capSeconds`). */
        field: z.string().optional(),
      })
      .strict(),
  })
  .strict();
export type ErrorBody = z.infer<typeof errorBodySchema>;

/**
 * Turn any thrown value into a JSON response. AppErrors keep their message; anything else is
 * logged by the caller and reported as a bare 500 so internals never reach the client.
 */
export function toResponse(err: unknown, onUnexpected?: (err: unknown) => void): Response {
  if (err instanceof AppError) {
    const body: ErrorBody = { error: { code: CODE[err.kind], message: err.message, ...(err.field ? { field: err.field } : {}) } };
    return Response.json(body, { status: err.status });
  }
  onUnexpected?.(err);
  const body: ErrorBody = { error: { code: "internal", message: "internal error; see the server log" } };
  return Response.json(body, { status: 500 });
}
