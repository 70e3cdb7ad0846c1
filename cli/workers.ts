import { Command } from "commander";
import type { WorkerView } from "../lib/client/slotkeeper-client";
import type { Context } from "./context";
import { show, table } from "./output";

/** `slotkeeper workers list`. */
export function workersCommand(ctx: Context): Command {
  const cmd = new Command("workers").description("the worker processes");
  cmd
    .command("list")
    .description("live workers first, then those gone in the last day")
    .action(async () => {
      const workers = await ctx.client().listWorkers();
      show(ctx.output(), { workers }, () =>
        workers.length
          ? table(workers, [
              { header: "ID", value: (w: WorkerView) => w.id },
              { header: "HOST", value: (w) => w.hostname },
              { header: "PID", value: (w) => w.pid, align: "right" },
              { header: "STATUS", value: (w) => w.status },
              { header: "IN FLIGHT", value: (w) => `${w.inFlight}/${w.concurrency}`, align: "right" },
              { header: "PARTITIONS", value: (w) => w.partitions },
              { header: "HEARTBEAT", value: (w) => w.lastHeartbeatAt },
              { header: "VERSION", value: (w) => w.version },
            ])
          : "no workers",
      );
    });
  return cmd;
}
