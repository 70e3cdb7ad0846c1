import { SchedulesView } from "@/components/schedules-view";

export default function SchedulesPage() {
  return <SchedulesView />;
}
