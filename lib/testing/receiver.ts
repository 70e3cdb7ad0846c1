/**
 * A local HTTP server that records what it receives: the witness outside the product that tests
 * of alert channels and of the http handler check against.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type Received = { path: string; headers: http.IncomingHttpHeaders; body: unknown };

/** A local HTTP server on 127.0.0.1 recording each request; `status` decides what it answers. */
export async function startReceiver(status: (req: Received) => number = () => 200) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
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
      const r = { path: req.url ?? "/", headers: req.headers, body };
      received.push(r);
      const code = status(r);
      res.writeHead(code, { "content-type": "text/plain" }).end(code < 300 ? "ok" : "receiver says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
