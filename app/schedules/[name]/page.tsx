import { ScheduleDetailView } from "@/components/schedule-detail-view";

export default async function SchedulePage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <ScheduleDetailView name={decodeURIComponent(name)} />;
}
