import { Badge } from "./ui/badge";
import { Time } from "./ui/time";

/**
 * "stuck since …": a run still heartbeating far past its schedule's timeout or usual duration
 * (lib/runs/stuck.ts), on the run page, the schedule page and in run lists; nothing otherwise.
 */
export function StuckBadge({ stuck, since, testId = "stuck-badge" }: { stuck: boolean | undefined; since: string | null | undefined; testId?: string }) {
  if (!stuck) return null;
  return (
    <span className="inline-flex flex-wrap items-center gap-1" data-testid={testId}>
      <Badge tone="red" title="Still running with its lease renewed, far past its schedule's timeout or usual duration">stuck</Badge>
      {since ? (
        <span className="text-xs text-slate-600">
          since <Time value={since} compact />
        </span>
      ) : null}
    </span>
  );
}
