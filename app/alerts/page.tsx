import { AlertsView } from "@/components/alerts-view";

export default function AlertsPage() {
  return <AlertsView />;
}
