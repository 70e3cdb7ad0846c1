import { queryOptions } from "@tanstack/react-query";
import type { WorkerView } from "../workers/queries";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export const workersKey = ["workers"] as const;

export const workersQuery = () =>
  queryOptions({
    queryKey: workersKey,
    queryFn: ({ signal }) => fetchJson<{ workers: WorkerView[] }>("/api/workers", { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
