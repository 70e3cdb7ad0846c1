import { queryOptions } from "@tanstack/react-query";
import type { ReplicaStatus } from "../server/replica";
import { fetchJson } from "./api";

/** How often the console asks /api/health about the read replica. */
export const REPLICA_REFRESH_MS = 5_000;

export const replicaQuery = () =>
  queryOptions({
    queryKey: ["health", "replica"] as const,
    queryFn: async ({ signal }) => (await fetchJson<{ replica?: ReplicaStatus }>("/api/health", { signal })).replica ?? null,
    refetchInterval: REPLICA_REFRESH_MS,
    retry: false,
  });
