import { deliverOnce } from "../../lib/alerts/deliveries";
import { sendToChannel } from "../../lib/alerts/send";
import { parseSmtpUrl } from "../../lib/alerts/smtp";
import type { Config } from "../../lib/config";
import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { startLoop, type Loop } from "./loop";

/** Idle poll for due deliveries and retries; new events wake the loop sooner. */
export const DELIVERY_POLL_MS = 2_000;
/** Deliveries sent at once per pass. */
export const DELIVERY_BATCH = 20;
/** One send gives up after this long (below the delivery lease of 60 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;

export type DeliveryLoopOptions = { db: Db; log: Logger; config: Pick<Config, "smtpUrl" | "smtpFrom"> };

/**
 * Send queued alert notifications. Its own loop with its own timeouts, so a slow or dead
 * receiver delays only other notifications, never claiming or running jobs.
 */
export function startDeliveryLoop(opts: DeliveryLoopOptions): Loop {
  const { db, log, config } = opts;
  const smtp = config.smtpUrl ? parseSmtpUrl(config.smtpUrl, config.smtpFrom) : null;
  return startLoop({
    name: "alerts:deliver",
    intervalMs: DELIVERY_POLL_MS,
    log,
    run: async () => {
      const r = await deliverOnce(db, { limit: DELIVERY_BATCH, send: sendToChannel, ctx: { smtp, timeoutMs: DELIVERY_TIMEOUT_MS } });
      if (r.claimed > 0) log.info({ event: "alerts:deliveries", ...r });
      return r.claimed === DELIVERY_BATCH;
    },
  });
}
