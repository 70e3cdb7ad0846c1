import type { UnservedHandler } from "@/lib/runs/unserved";
import { Time } from "./ui/time";

/** Routing: "No live worker serves handler X since …", on the schedule and run pages (nothing when served). */
export function UnservedNotice({ unserved }: { unserved: UnservedHandler | null | undefined }) {
  if (!unserved) return null;
  return (
    <div role="status" className="rounded-lg border border-amber-300 bg-amber-50 p-3 text-sm text-amber-900" data-testid="unserved-handler">
      No live worker serves handler <span className="font-mono">{unserved.handler}</span>
      {unserved.since ? (
        <>
          {" "}since <Time value={unserved.since} />
        </>
      ) : null}
      : its runs wait pending, no attempt used, until a worker with it starts.
    </div>
  );
}
