import net from "node:net";

/**
 * A TCP proxy for tests that loses, or holds back, one answer after its commit. Once armed with a
 * marker, the first server reply holding a DataRow that contains the marker is kept from the
 * client from that DataRow on. Its ReadyForQuery means the statement has committed
 * (ReadyForQuery follows the Sync that ends an implicit transaction); then
 *   - `arm` (cut): both sockets are destroyed, so the client sees its connection reset and never
 *     learns the statement's result, which the database has kept;
 *   - `hold`: the reply waits whole in the proxy until `release()` hands it to the client, so a
 *     test can act (stop the client, move the clock) between the commit and the client's reading.
 */
export async function startAnswerCut(target: { host: string; port: number }) {
  let marker: Buffer | null = null;
  let mode: "cut" | "hold" = "cut";
  let cuts = 0;
  let release: (() => void) | null = null;
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
    // Held messages of this connection (hold mode), from the marked DataRow on, until released.
    let holding: Buffer[] | null = null;
    upstream.on("data", (chunk: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      const out: Buffer[] = [];
      while (buf.length >= 5) {
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) break;
        const msg = buf.subarray(0, len + 1);
        buf = buf.subarray(len + 1);
        const type = String.fromCharCode(msg[0]);
        if (marker && type === "D" && msg.includes(marker)) {
          if (mode === "cut") doomed = true;
          else if (holding === null) holding = [];
        }
        if (holding) {
          holding.push(msg);
          if (type === "Z" && marker) {
            marker = null;
            const held = holding;
            release = () => {
              holding = null;
              release = null;
              client.write(Buffer.concat(held));
            };
          }
          continue;
        }
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
      mode = "cut";
      marker = Buffer.from(text, "utf8");
    },
    /** Hold back the next answer that holds `text` in a row, whole, until `release()`. */
    hold: (text: string) => {
      mode = "hold";
      marker = Buffer.from(text, "utf8");
    },
    /** True once a held answer is complete (its statement committed) and waiting for `release()`. */
    get holding() {
      return release !== null;
    },
    /** Hand the held answer to its client. */
    release: () => {
      if (!release) throw new Error("no answer is held");
      release();
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
