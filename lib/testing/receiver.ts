/**
 * A local HTTP server that records what it receives: the witness outside the product that tests
 * of alert channels and of the http handler check against.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

export type Received = {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: unknown;
  /** performance.now() when the request arrived and when the answer went out (one monotonic clock, this process's). */
  arrivedAt: number;
  answeredAt?: number;
};

export type ReceiverOptions = {
  /** Hold each answer this long: a request's [arrivedAt, answeredAt] is then the call's execution. */
  holdMs?: number;
  /**
   * Answer only once this has settled (then after holdMs): while it runs, the caller is still
   * waiting for the answer, so whatever it reads happened before the call returned. A failure does
   * not stop the answer; the test records what it needs itself.
   */
  before?: (req: Received) => Promise<unknown>;
};

/**
 * A local HTTP server on 127.0.0.1 recording each request; `status` decides what it answers. It is
 * the witness outside Slotkeeper: what it received is what handlers really did.
 */
export async function startReceiver(status: (req: Received) => number = () => 200, opts: ReceiverOptions = {}) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const arrivedAt = performance.now();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: keep the text
      }
      const r: Received = { path: req.url ?? "/", headers: req.headers, body, arrivedAt };
      received.push(r);
      const code = status(r);
      const answer = () => {
        r.answeredAt = performance.now();
        res.writeHead(code, { "content-type": "text/plain" }).end(code < 300 ? "ok" : "receiver says no");
      };
      const hold = () => {
        if (opts.holdMs) setTimeout(answer, opts.holdMs);
        else answer();
      };
      if (opts.before) void opts.before(r).then(hold, hold);
      else hold();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** The Idempotency-Key of each request, in arrival order. */
    keys: () => received.map((r) => String(r.headers["idempotency-key"])),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
