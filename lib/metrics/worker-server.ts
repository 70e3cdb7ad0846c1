/**
 * A worker's own Prometheus endpoint: `GET /metrics` on SLOTKEEPER_METRICS_PORT, bound to
 * SLOTKEEPER_METRICS_HOST (loopback unless set, so nothing outside the machine scrapes a worker by
 * accident). It serves only this process's registry: no database read, so a scrape costs the same
 * whatever the fleet and works while the database is away.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

export type MetricsServer = { port: number; close: () => Promise<void> };

/** Listen on host:port and answer `GET /metrics` from the registry; any other path is 404. */
export async function startMetricsServer(registry: Registry, opts: { host: string; port: number }): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: the worker serves /metrics only\n");
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" }).end("method not allowed\n");
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": registry.contentType, "cache-control": "no-store" }).end(req.method === "HEAD" ? undefined : text),
      (err: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics failed: ${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
