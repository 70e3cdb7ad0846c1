// A TCP proxy between the chaos workers and PostgreSQL that cuts connections around commit
// points. It frames the client→server half of the PostgreSQL wire protocol just enough to see
// where a transaction ends: a simple query ('Q', autocommit or an explicit COMMIT) or a Sync ('S',
// which commits an extended-protocol statement outside a transaction block). At such a point it
// may cut BEFORE forwarding (the server rolls back) or AFTER (the server commits, the client only
// sees a reset) — the second is the ambiguous commit every fenced write must survive.
import net from "node:net";
import type { Random } from "./random";

/**
 * One silenced connection at the end of its episode: when the client first sent something that
 * got no answer, and whether (and when) the client gave the connection up itself.
 */
export type SilencedConnection = { listen: boolean; firstUnansweredAt: number | null; closedByClientAt: number | null };

/** What the proxy did, for the report. */
export type ProxyStats = { connections: number; cutsBeforeCommit: number; cutsAfterCommit: number };

export type ChaosProxy = {
  port: number;
  stats: ProxyStats;
  /** When each cut after a commit happened (this process's clock): the client never heard it committed. */
  cutsAfterCommitAt: number[];
  /** Turn cutting on or off (off while draining); forwarding always continues. */
  setCutting: (on: boolean) => void;
  /** Send new connections to another server and drop the open ones, as a moving virtual IP does (a failover). */
  retarget: (target: { host: string; port: number }) => void;
  /**
   * Make every live connection whose startup names `app` as its application_name silent: no byte
   * forwarded either way, both sockets left open (no FIN, no RST). Says how many, and how many of
   * them LISTEN; `end()` closes them (the episode is over).
   */
  silence: (app: string) => { connections: number; listen: number; end: () => SilencedConnection[] };
  close: () => Promise<void>;
};

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;

/** The key/value pairs of a startup message (protocol 3.0). */
function startupParams(bytes: Buffer): Record<string, string> {
  const parts = bytes.subarray(8).toString("utf8").split("\0");
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) out[parts[i]] = parts[i + 1];
  return out;
}

/** Splits the client's byte stream into whole protocol messages (startup phase first). */
function createFramer() {
  let buf: Buffer = Buffer.alloc(0);
  let startup = true;
  return (chunk: Buffer): { type: string; bytes: Buffer; text: string }[] => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    const out: { type: string; bytes: Buffer; text: string }[] = [];
    for (;;) {
      if (startup) {
        if (buf.length < 8) break;
        const len = buf.readInt32BE(0);
        if (buf.length < len) break;
        const code = buf.readInt32BE(4);
        out.push({ type: "startup", bytes: buf.subarray(0, len), text: "" });
        buf = buf.subarray(len);
        if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) startup = false;
        continue;
      }
      if (buf.length < 5) break;
      const len = buf.readInt32BE(1);
      if (buf.length < len + 1) break;
      const bytes = buf.subarray(0, len + 1);
      const type = String.fromCharCode(bytes[0]);
      // Only simple queries need their text (to tell a COMMIT from a read).
      const text = type === "Q" ? bytes.subarray(5, Math.min(bytes.length, 64)).toString("utf8") : "";
      out.push({ type, bytes, text });
      buf = buf.subarray(len + 1);
    }
    return out;
  };
}

/** Start the proxy on a free loopback port, forwarding to target; `cutRate` is per commit point. */
export async function startChaosProxy(opts: {
  target: { host: string; port: number };
  random: Random;
  cutRate: number;
  maxCuts: number;
}): Promise<ChaosProxy> {
  const stats: ProxyStats = { connections: 0, cutsBeforeCommit: 0, cutsAfterCommit: 0 };
  const cutsAfterCommitAt: number[] = [];
  let cutting = false;
  const sockets = new Set<net.Socket>();
  let target = opts.target;
  type Conn = { app: string; listen: boolean; silent: boolean; kill: () => void; firstUnansweredAt: number | null; closedByClientAt: number | null };
  const conns = new Set<Conn>();
  const cutsLeft = () => opts.maxCuts - stats.cutsBeforeCommit - stats.cutsAfterCommit;

  const server = net.createServer((client) => {
    stats.connections++;
    const upstream = net.connect(target);
    sockets.add(client);
    sockets.add(upstream);
    const conn: Conn = { app: "", listen: false, silent: false, kill: () => {}, firstUnansweredAt: null, closedByClientAt: null };
    const kill = () => {
      conns.delete(conn);
      client.destroy();
      upstream.destroy();
    };
    conn.kill = kill;
    conns.add(conn);
    // A silent connection keeps its other end open whatever one end does, until its episode ends.
    client.on("close", () => {
      sockets.delete(client);
      if (conn.silent) conn.closedByClientAt ??= Date.now();
      else kill();
    });
    upstream.on("close", () => {
      sockets.delete(upstream);
      if (!conn.silent) kill();
    });
    client.on("error", () => conn.silent || kill());
    upstream.on("error", () => conn.silent || kill());
    client.setNoDelay(true);
    upstream.setNoDelay(true);

    let dropNextResponse = false;
    upstream.on("data", (chunk) => {
      if (conn.silent) return;
      if (dropNextResponse) return kill(); // the server has acted on the commit; the client never hears
      client.write(chunk);
    });

    const frame = createFramer();
    client.on("data", (chunk) => {
      if (conn.silent) {
        conn.firstUnansweredAt ??= Date.now();
        return;
      }
      if (dropNextResponse) return;
      for (const msg of frame(chunk)) {
        if (msg.type === "startup" && msg.bytes.length > 8 && msg.bytes.readInt32BE(4) === 196608) {
          conn.app = startupParams(msg.bytes).application_name ?? "";
        }
        if (msg.type === "Q" && /^\s*listen\b/i.test(msg.text)) conn.listen = true;
        const commitPoint = msg.type === "S" || (msg.type === "Q" && !/^\s*(select|begin|set|show)\b/i.test(msg.text));
        if (commitPoint && cutting && cutsLeft() > 0 && opts.random.chance(opts.cutRate)) {
          if (opts.random.chance(0.5)) {
            stats.cutsBeforeCommit++;
            return kill();
          }
          stats.cutsAfterCommit++;
          cutsAfterCommitAt.push(Date.now());
          upstream.write(msg.bytes);
          dropNextResponse = true;
          return;
        }
        upstream.write(msg.bytes);
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    stats,
    cutsAfterCommitAt,
    setCutting: (on) => {
      cutting = on;
    },
    retarget: (next) => {
      target = next;
      for (const s of sockets) s.destroy();
    },
    silence: (app) => {
      const hit = [...conns].filter((c) => c.app === app);
      for (const c of hit) c.silent = true;
      const end = () => {
        const out = hit.map((c) => ({ listen: c.listen, firstUnansweredAt: c.firstUnansweredAt, closedByClientAt: c.closedByClientAt }));
        for (const c of hit) c.kill();
        return out;
      };
      return { connections: hit.length, listen: hit.filter((c) => c.listen).length, end };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
