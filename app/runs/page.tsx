import { PageHeader } from "@/components/ui/page-header";
import { EmptyState } from "@/components/ui/states";

export default function RunsPage() {
  return (
    <div>
      <PageHeader title="Runs" description="Every slot across schedules; filter by state to find dead runs." />
      <EmptyState title="No runs yet" testId="runs-empty" />
    </div>
  );
}
