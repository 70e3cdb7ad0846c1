import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/states";

export default function SchedulesPage() {
  return (
    <div>
      <PageHeader title="Schedules" description="Cron expressions and intervals, each in its own time zone, with its catch-up policy." />
      <EmptyState title="No schedules yet" testId="schedules-empty" />
    </div>
  );
}
