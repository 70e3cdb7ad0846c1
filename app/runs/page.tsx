import { RunsView } from "@/components/runs-view";

export default async function RunsPage({ searchParams }: { searchParams: Promise<{ state?: string }> }) {
  const { state } = await searchParams;
  return <RunsView initialState={state ?? ""} />;
}
