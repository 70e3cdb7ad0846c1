import { ScheduleEditor } from "@/components/schedule-editor";

export default function NewSchedulePage() {
  return <ScheduleEditor />;
}
