import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler } from "../../lib/handlers/types";
import { waitFor } from "../../lib/handlers/wait";

const info = BUILTIN_HANDLERS.find((h) => h.name === "sleep")!;

/** Waits payload.ms milliseconds (default 1000), stopping at once when the signal aborts. */
export const sleepHandler = defineHandler<{ ms?: number }>({
  ...info,
  run: async (ctx) => {
    const ms = Number(ctx.payload?.ms ?? 1000);
    await waitFor(Number.isFinite(ms) && ms >= 0 ? ms : 1000, ctx.signal);
  },
});
