import net from "node:net";

/**
 * A TCP proxy for tests that loses one answer after its commit: once armed with a marker, the
 * first server reply holding a DataRow that contains the marker is held back, and when that
 * reply's ReadyForQuery arrives (the statement has committed: ReadyForQuery follows the Sync that
 * ends an implicit transaction) both sockets are destroyed. The client sees its connection reset
 * and never learns the statement's result, which the database has kept.
 */
export async function startAnswerCut(target: { host: string; port: number }) {
  let marker: Buffer | null = null;
  let cuts = 0;
  const live = new Set<{ client: net.Socket; upstream: net.Socket }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    const pair = { client, upstream };
    live.add(pair);
    const close = () => {
      live.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on("error", close);
      s.on("close", close);
    }
    client.on("data", (b) => upstream.write(b));
    // The server's stream framed into messages (type byte, int32 length that counts itself), so a
    // DataRow is told from its neighbours. No SSL: the test connects in plain text.
    let buf: Buffer = Buffer.alloc(0);
    let doomed = false;
    upstream.on("data", (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      const out: Buffer[] = [];
      while (buf.length >= 5) {
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) break;
        const msg = buf.subarray(0, len + 1);
        buf = buf.subarray(len + 1);
        const type = String.fromCharCode(msg[0]);
        if (marker && type === "D" && msg.includes(marker)) doomed = true;
        if (doomed && type === "Z") {
          marker = null;
          cuts++;
          return close();
        }
        if (!doomed) out.push(msg);
      }
      if (out.length) client.write(Buffer.concat(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    /** Lose the next answer that holds `text` in a row. */
    arm: (text: string) => {
      marker = Buffer.from(text, "utf8");
    },
    /** How many answers were lost so far. */
    get cuts() {
      return cuts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const p of live) (p.client.destroy(), p.upstream.destroy());
        server.close(() => resolve());
      }),
  };
}
