import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler, NonRetryableError } from "../../lib/handlers/types";

const info = BUILTIN_HANDLERS.find((h) => h.name === "fail")!;

/** Always fails with payload.message; payload.nonRetryable sends the run dead at once. */
export const failHandler = defineHandler<{ message?: string; nonRetryable?: boolean }>({
  ...info,
  run: (ctx) => {
    const message = ctx.payload?.message ?? `fail handler: attempt ${ctx.attempt} failed on purpose`;
    throw ctx.payload?.nonRetryable ? new NonRetryableError(message) : new Error(message);
  },
});
