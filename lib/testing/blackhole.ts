import net from "node:net";

/**
 * A TCP proxy for tests whose live connections can be made silent: `silence()` stops forwarding
 * in both directions and keeps every socket open (no FIN, no RST), as a network that drops
 * packets does. Connections opened after it forward as usual.
 */
export async function startBlackhole(target: { host: string; port: number }) {
  const live = new Set<{ client: net.Socket; upstream: net.Socket; silent: boolean }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pair = { client, upstream, silent: false };
    live.add(pair);
    const close = () => {
      live.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    upstream.on("data", (b) => pair.silent || client.write(b));
    client.on("data", (b) => pair.silent || upstream.write(b));
    // A silent pair stays open whatever its ends do, until the test closes the proxy.
    for (const s of [client, upstream]) {
      s.on("error", () => pair.silent || close());
      s.on("close", () => pair.silent || close());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Make every open connection silent; returns how many. */
    silence: () => {
      for (const p of live) p.silent = true;
      return live.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const p of live) (p.client.destroy(), p.upstream.destroy());
        server.close(() => resolve());
      }),
  };
}

/** `url` with its host and port replaced by the proxy's. */
export function throughProxy(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return u.toString();
}
