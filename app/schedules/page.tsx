import { Suspense } from "react";
import { SchedulesView } from "@/components/schedules-view";
import { Loading } from "@/components/ui/states";

// The view reads its filters and page from the URL (useSearchParams), which needs a Suspense boundary.
export default function SchedulesPage() {
  return (
    <Suspense fallback={<Loading />}>
      <SchedulesView />
    </Suspense>
  );
}
