import { sql } from "drizzle-orm";
import type { Config } from "../config";
import type { Db } from "../db/client";
import type { ChannelView } from "./channels";
import { sampleMessage } from "./message";
import { sendToChannel } from "./send";
import { parseSmtpUrl } from "./smtp";

/** The "Send test" button waits at most this long for the receiver. */
export const TEST_SEND_TIMEOUT_MS = 10_000;

/** Send the sample notification to one channel right away (not queued), reporting the receiver's answer. */
export async function sendTestNotification(
  db: Db,
  channel: Pick<ChannelView, "kind" | "config">,
  config: Pick<Config, "publicUrl" | "smtpUrl" | "smtpFrom">,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const { rows } = await db.execute<{ now: string }>(sql`SELECT sk_now() AS now`);
  const smtp = config.smtpUrl ? parseSmtpUrl(config.smtpUrl, config.smtpFrom) : null;
  try {
    await sendToChannel(channel, sampleMessage(config.publicUrl, new Date(rows[0].now)), { smtp, timeoutMs: TEST_SEND_TIMEOUT_MS });
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
}
