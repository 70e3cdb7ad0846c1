import { WorkersView } from "@/components/workers-view";

export default function WorkersPage() {
  return <WorkersView />;
}
