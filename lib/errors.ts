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

const CODE: Record<AppErrorKind, string> = {
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

/** The one error body of the API: `{ error: { code, message, field } }`. */
export type ErrorBody = { error: { code: string; message: string; field?: string } };

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
