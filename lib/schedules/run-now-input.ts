/**
 * The optional body of POST /api/schedules/{name}/run-now: `{ payload? }`, a payload for this one
 * run in place of the schedule's (the schedule and its slots are left alone). It meets the same
 * rules as a schedule's payload: a JSON object within the size limit that the schedule's handler
 * accepts (`payload.args` for a command, …). A 400 names the field.
 */
import { z } from "zod";
import { AppError } from "../errors";
import { refuseMaskedPayload } from "../security/mask";
import { DEFAULT_PAYLOAD_MAX_BYTES, validateHandlerPayload } from "./input";

export type RunNowInput = { payload?: Record<string, unknown> };

/** The body as the OpenAPI document describes it (the parser below also checks it against the handler). */
export const runNowBodySchema = z.object({ payload: z.record(z.string(), z.unknown()).optional() }).strict();

export function parseRunNowInput(body: unknown, handler: string, opts: { payloadMaxBytes?: number } = {}): RunNowInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AppError("invalid", "the body must be a JSON object { payload? }", "body");
  const extra = Object.keys(body).find((k) => k !== "payload");
  if (extra !== undefined) throw new AppError("invalid", `unknown field "${extra}"; the body is { payload? }`, extra);
  const payload = (body as { payload?: unknown }).payload;
  if (payload === undefined) return {};
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw new AppError("invalid", "payload must be a JSON object", "payload");
  const max = opts.payloadMaxBytes ?? DEFAULT_PAYLOAD_MAX_BYTES;
  if (Buffer.byteLength(JSON.stringify(payload), "utf8") > max) throw new AppError("invalid", `payload is larger than ${max} bytes of JSON`, "payload");
  refuseMaskedPayload(payload);
  validateHandlerPayload(handler, payload);
  return { payload: payload as Record<string, unknown> };
}
