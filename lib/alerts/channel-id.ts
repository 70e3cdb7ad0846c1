import { AppError } from "../errors";

/** A channel id from a URL segment, or a validation error. */
export function parseChannelId(raw: string): number {
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id <= 0) throw new AppError("invalid", `"${raw}" is not a channel id`, "id");
  return id;
}
