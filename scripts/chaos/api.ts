// API changes during the chaos run, each recorded with what it asked for and whether the console
// acknowledged it (2xx). `lost_acks` later compares the last acknowledged state with the database.
// A call that failed (5xx, reset) may or may not have committed: it makes that field "unknown"
// until the next acknowledged change, instead of guessing.

/** One API call as the chaos run saw it; times are the chaos process's clock (ms). */
export type ApiCall = {
  kind: "create" | "edit" | "pause" | "resume" | "requeue";
  target: string;
  startedAt: number;
  endedAt: number;
  status: number; // 0 = no response
  acked: boolean;
  /** What the change should leave behind: description (edit), enabled (pause/resume), run counters (requeue). */
  expect?: { description?: string; enabled?: boolean; runId?: number; attemptsBefore?: number; maxAttemptsBefore?: number };
  error?: string;
};

/** A thin client over the JSON API that records every change it makes. */
export function createApiClient(baseUrl: string) {
  const calls: ApiCall[] = [];
  /** Changes sent and not answered yet: whether they commit is not known until they are. */
  const pending = new Set<{ kind: ApiCall["kind"]; target: string; startedAt: number; expect?: ApiCall["expect"] }>();

  const send = async (method: string, urlPath: string, body?: unknown): Promise<{ status: number; json: unknown; error?: string }> => {
    try {
      const res = await fetch(baseUrl + urlPath, {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await res.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: res.status, json };
    } catch (err) {
      return { status: 0, json: null, error: err instanceof Error ? err.message : String(err) };
    }
  };

  const record = async (kind: ApiCall["kind"], target: string, method: string, urlPath: string, body: unknown, expect?: ApiCall["expect"]) => {
    const startedAt = Date.now();
    const inFlight = { kind, target, startedAt, expect };
    pending.add(inFlight);
    const r = await send(method, urlPath, body); // never throws: a failure is status 0
    const call: ApiCall = { kind, target, startedAt, endedAt: Date.now(), status: r.status, acked: r.status >= 200 && r.status < 300, expect };
    if (!call.acked) call.error = r.error ?? JSON.stringify(r.json).slice(0, 300);
    calls.push(call);
    pending.delete(inFlight);
    return { call, json: r.json };
  };

  const enc = encodeURIComponent;

  return {
    calls,
    pending,
    /** POST /api/schedules. */
    create: (body: { name: string } & Record<string, unknown>) => record("create", body.name, "POST", "/api/schedules", body),
    /** GET the schedule's version, then PATCH its description with it. */
    edit: async (name: string, description: string) => {
      const got = await send("GET", `/api/schedules/${enc(name)}`);
      const version = (got.json as { schedule?: { version?: number }; version?: number } | null)?.schedule?.version ?? (got.json as { version?: number } | null)?.version;
      if (typeof version !== "number") return null;
      return record("edit", name, "PATCH", `/api/schedules/${enc(name)}`, { description, version }, { description });
    },
    /**
     * GET the version, then PATCH `change` (timing, catch-up, max lateness) with a description
     * that names the change, so the edit checks (whole, recorded, not lost) cover it too.
     */
    patch: async (name: string, change: Record<string, unknown>, description: string) => {
      const got = await send("GET", `/api/schedules/${enc(name)}`);
      const version = (got.json as { schedule?: { version?: number }; version?: number } | null)?.schedule?.version ?? (got.json as { version?: number } | null)?.version;
      if (typeof version !== "number") return null;
      return record("edit", name, "PATCH", `/api/schedules/${enc(name)}`, { ...change, description, version }, { description });
    },
    pause: (name: string) => record("pause", name, "POST", `/api/schedules/${enc(name)}/pause`, {}, { enabled: false }),
    resume: (name: string) => record("resume", name, "POST", `/api/schedules/${enc(name)}/resume`, {}, { enabled: true }),
    requeue: (runId: number, attemptsBefore: number, maxAttemptsBefore: number) =>
      record("requeue", String(runId), "POST", `/api/runs/${runId}/requeue`, {}, { runId, attemptsBefore, maxAttemptsBefore }),
    /** GET helper for checks. */
    get: (urlPath: string) => send("GET", urlPath),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
