import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler } from "../../lib/handlers/types";

const info = BUILTIN_HANDLERS.find((h) => h.name === "noop")!;

/** Does nothing and succeeds: demos and benchmarks. */
export const noopHandler = defineHandler({ ...info, run: () => undefined });
