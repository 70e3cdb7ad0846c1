import { queryOptions } from "@tanstack/react-query";
import type { ChannelInput, ChannelView } from "../alerts/channels";
import type { AlertEventView, FiringAlert } from "../alerts/history";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export type { AlertEventView, ChannelInput, ChannelView, FiringAlert };
export type HistoryFilterValues = { schedule: string; rule: string; kind: string };

export const channelsKey = ["alerts", "channels"] as const;
export const firingKey = ["alerts", "firing"] as const;
export const alertEventsKey = (f: HistoryFilterValues, before: number | null) => ["alerts", "events", f, before] as const;

/** Channels, and whether the server can send e-mail. */
export const channelsQuery = () =>
  queryOptions({
    queryKey: channelsKey,
    queryFn: ({ signal }) => fetchJson<{ channels: ChannelView[]; smtpConfigured: boolean }>("/api/alerts/channels", { signal }),
  });

/** Alerts firing now, polled. */
export const firingQuery = () =>
  queryOptions({
    queryKey: firingKey,
    queryFn: async ({ signal }) => (await fetchJson<{ firing: FiringAlert[] }>("/api/alerts", { signal })).firing,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** One page of alert history (newest first) with deliveries, polled so delivery states move. */
export const alertEventsQuery = (f: HistoryFilterValues, before: number | null) =>
  queryOptions({
    queryKey: alertEventsKey(f, before),
    queryFn: ({ signal }) => {
      const q = new URLSearchParams({ limit: "50" });
      for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
      if (before) q.set("before", String(before));
      return fetchJson<{ events: AlertEventView[]; nextBefore: number | null }>(`/api/alerts/events?${q}`, { signal });
    },
    refetchInterval: LIVE_REFRESH_MS,
  });

const channelPath = (id: number) => `/api/alerts/channels/${id}`;

export const createChannel = (body: ChannelInput) => fetchJson<{ channel: ChannelView }>("/api/alerts/channels", { method: "POST", json: body });
export const updateChannel = (id: number, body: ChannelInput) => fetchJson<{ channel: ChannelView }>(channelPath(id), { method: "PATCH", json: body });
export const deleteChannel = (id: number) => fetchJson<void>(channelPath(id), { method: "DELETE" });
/** Send the sample notification now; resolves with the receiver's verdict. */
export const testChannel = (id: number) => fetchJson<{ ok: boolean; error?: string }>(`${channelPath(id)}/test`, { method: "POST" });
