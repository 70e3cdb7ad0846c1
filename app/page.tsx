import { OverviewView } from "@/components/overview-view";

export default function OverviewPage() {
  return <OverviewView />;
}
