import { ScheduleEditor } from "@/components/schedule-editor";

export default async function EditSchedulePage({ params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  return <ScheduleEditor name={decodeURIComponent(name)} />;
}
