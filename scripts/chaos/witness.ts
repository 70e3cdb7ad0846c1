// The witness outside PostgreSQL: an HTTP receiver in the chaos process that the `http` schedules
// call. It records every request as it arrives (idempotency key, fencing token, arrival time on
// this process's clock), so what reached the outside world is known without asking Slotkeeper.
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One request as the witness saw it arrive. */
export type WitnessHit = { key: string; token: number; at: number };

export type Witness = {
  url: string;
  hits: WitnessHit[];
  close: () => Promise<void>;
};

/** Start the receiver on 127.0.0.1 (a free port). It answers 200 to every POST /hit. */
export async function startWitness(): Promise<Witness> {
  const hits: WitnessHit[] = [];
  const server = http.createServer((req, res) => {
    // Arrival is when the request line and headers came in: the moment the call reached us.
    const at = Date.now();
    const key = String(req.headers["idempotency-key"] ?? "");
    const token = Number(req.headers["x-fencing-token"] ?? NaN);
    req.resume();
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/hit" && key && Number.isInteger(token)) {
        hits.push({ key, token, at });
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      } else res.writeHead(400).end("witness: POST /hit with Idempotency-Key and X-Fencing-Token");
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hit`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An attempt as the database recorded it: which run and slot, its token, when it started (ms). */
export type WitnessAttempt = { key: string; token: number; startedAt: number; previousOutcome: string | null };

/** A slot the witness must have seen: a finished, non-manual run of an `http` schedule. */
export type WitnessSlot = { key: string; schedule: string; slot: number };

/**
 * The witness's checks, from the requests it recorded and the attempts in the database:
 * - missing: a done slot of an http schedule whose request never arrived;
 * - zombieRequests: a request carrying token t that arrived after attempt t + 1 of the same run
 *   started (the superseded attempt must stop at its lease minus the safety margin, before any
 *   successor can start);
 * - unexplainedRepeats: a request beyond the first for a slot that no ended attempt explains: the
 *   same token twice, or token t > 1 when attempt t - 1 succeeded (or was never recorded).
 * `toleranceMs` covers the two clocks (this process and the database on one host, offset measured).
 */
export function checkWitness(hits: WitnessHit[], attempts: WitnessAttempt[], required: WitnessSlot[], toleranceMs: number) {
  const byKey = new Map<string, WitnessHit[]>();
  for (const h of hits) byKey.set(h.key, [...(byKey.get(h.key) ?? []), h]);
  const attempt = new Map(attempts.map((a) => [`${a.key}#${a.token}`, a]));
  const missing = required.filter((r) => !byKey.has(r.key)).map((r) => ({ schedule: r.schedule, slot: new Date(r.slot).toISOString() }));
  const zombieRequests: { key: string; token: number; arrived_ms_after_successor_started: number }[] = [];
  const unexplainedRepeats: { key: string; token: number; why: string }[] = [];
  for (const [key, list] of byKey) {
    const seenTokens = new Set<number>();
    for (const h of list) {
      const successor = attempt.get(`${key}#${h.token + 1}`);
      if (successor && h.at > successor.startedAt + toleranceMs) zombieRequests.push({ key, token: h.token, arrived_ms_after_successor_started: Math.round(h.at - successor.startedAt) });
      if (seenTokens.has(h.token)) unexplainedRepeats.push({ key, token: h.token, why: "the same attempt called twice" });
      else if (h.token > 1) {
        const own = attempt.get(`${key}#${h.token}`);
        const before = own?.previousOutcome ?? null;
        if (before === null || before === "succeeded") unexplainedRepeats.push({ key, token: h.token, why: before === null ? "no earlier attempt ended" : "the earlier attempt succeeded" });
      }
      seenTokens.add(h.token);
    }
  }
  return { requests: hits.length, slotsSeen: byKey.size, missing, zombieRequests, unexplainedRepeats };
}
