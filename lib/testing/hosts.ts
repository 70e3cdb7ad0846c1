// Test and bench only: "hosts" on this machine. Each host is a network namespace with its own
// address, joined by a veth pair to a bridge in this (the root) namespace, which holds the
// database's address. So a worker started in a host (`ip netns exec <ns> node ...`) reaches
// PostgreSQL over its own link, and cutting that link (`ip link set <veth> down`, on our side of the
// pair) cuts that host alone, silently: no reset, no FIN, its packets simply go nowhere. The
// addresses are in 198.18.0.0/15 (RFC 2544, the benchmarking range), so none can be a real host.
// Needs root and iproute2; `hostsUnavailable()` says why not when they are missing.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startEmbeddedPostgres, portIsFree, type EmbeddedDatabase } from "../db/embedded";
import { migrateDatabase } from "../db/migrate";

export type Host = {
  /** Short name (`h1`…), also the namespace's suffix. */
  name: string;
  /** The network namespace to start processes in. */
  ns: string;
  /** Its own address on the bridge. */
  address: string;
  /** Our side of its veth pair. */
  link: string;
  /** Take its link down (silently: its packets are dropped, nothing is reset) / back up. */
  cut: () => void;
  restore: () => void;
  /** `cmd args` as run inside the host: prefix for spawn. */
  command: (cmd: string, args: string[]) => [string, string[]];
};

export type Hosts = {
  hosts: Host[];
  /** The bridge's address (this namespace): where a server for the hosts listens. */
  bridgeAddress: string;
  /** The hosts' network, for pg_hba.conf. */
  cidr: string;
  /** Delete the namespaces, veths and bridge; safe to call twice (also runs at process exit). */
  cleanup: () => void;
};

const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "pipe", "pipe"] }).toString();

/** Why hosts cannot be made here (not root, no `ip netns`), or null when they can. */
export function hostsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "needs root: network namespaces and veth pairs (`ip netns add`) are created for the hosts";
  const r = spawnSync("ip", ["netns", "list"], { stdio: "ignore" });
  if (r.error || r.status !== 0) return "needs iproute2 with network namespace support (`ip netns list` failed)";
  return null;
}

/** A /24 of 198.18.0.0/15 that no interface here uses (other runs' hosts, e2e/netns.spec.ts' 198.18.0.0/30). */
function freeSubnet(): number {
  const used = ip("-o", "-4", "addr", "show");
  for (let i = 0; i < 50; i++) {
    const third = 1 + Math.floor(Math.random() * 254);
    if (!used.includes(`198.18.${third}.`)) return third;
  }
  throw new Error("no free 198.18.x.0/24 for the test hosts");
}

/**
 * Create `n` hosts with unique names (interface names stay within Linux's 15 characters). Every
 * step is undone by `cleanup`, which also runs at exit, so a failed test leaves nothing behind.
 */
export function createHosts(n: number): Hosts {
  const why = hostsUnavailable();
  if (why) throw new Error(why);
  const tag = `sk${randomBytes(3).toString("hex")}`; // 8 characters
  const third = freeSubnet();
  const bridge = `${tag}br`;
  const bridgeAddress = `198.18.${third}.1`;
  const made: { ns: string[]; links: string[] } = { ns: [], links: [] };
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    process.removeListener("exit", cleanup);
    for (const ns of made.ns) spawnSync("ip", ["netns", "del", ns], { stdio: "ignore" });
    for (const link of made.links) spawnSync("ip", ["link", "del", link], { stdio: "ignore" });
  };
  process.on("exit", cleanup);
  try {
    ip("link", "add", bridge, "type", "bridge");
    made.links.push(bridge);
    ip("addr", "add", `${bridgeAddress}/24`, "dev", bridge);
    ip("link", "set", bridge, "up");
    const hosts: Host[] = [];
    for (let i = 1; i <= n; i++) {
      const name = `h${i}`;
      const ns = `${tag}-${name}`;
      const link = `${tag}h${i}`;
      const inner = `${tag}n${i}`;
      const address = `198.18.${third}.${10 + i}`;
      ip("netns", "add", ns);
      made.ns.push(ns);
      ip("link", "add", link, "type", "veth", "peer", "name", inner);
      made.links.push(link);
      ip("link", "set", inner, "netns", ns);
      ip("link", "set", link, "master", bridge);
      ip("link", "set", link, "up");
      ip("netns", "exec", ns, "ip", "addr", "add", `${address}/24`, "dev", inner);
      ip("netns", "exec", ns, "ip", "link", "set", inner, "up");
      ip("netns", "exec", ns, "ip", "link", "set", "lo", "up");
      hosts.push({
        name,
        ns,
        address,
        link,
        cut: () => void ip("link", "set", link, "down"),
        restore: () => void ip("link", "set", link, "up"),
        command: (cmd, args) => ["ip", ["netns", "exec", ns, cmd, ...args]],
      });
    }
    return { hosts, bridgeAddress, cidr: `198.18.${third}.0/24`, cleanup };
  } catch (err) {
    cleanup();
    throw err;
  }
}

export type HostsDatabase = {
  /** For this process (127.0.0.1). */
  url: string;
  /** For the hosts: the same database at the bridge's address. */
  hostsUrl: string;
  server: EmbeddedDatabase;
  stop: () => Promise<void>;
};

/**
 * A throwaway PostgreSQL cluster of our own that listens on 127.0.0.1 and the hosts' bridge and
 * lets the hosts' network in (the shared server on 127.0.0.1:5432 stays as it is), migrated.
 */
export async function startHostsDatabase(hosts: Hosts, opts: { migrate?: boolean } = {}): Promise<HostsDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "slotkeeper-hosts-"));
  fs.chmodSync(dir, 0o755); // as root the server runs as `postgres`, which must reach it
  let port = 57900 + Math.floor(Math.random() * 500);
  while (!(await portIsFree(port)) || !(await portIsFree(port, hosts.bridgeAddress))) port++;
  const server = await startEmbeddedPostgres({ dir, port, ephemeral: true, listenAddresses: [hosts.bridgeAddress], allowFrom: [hosts.cidr] });
  const stop = async () => {
    await server.stop().catch(() => {});
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (opts.migrate !== false) await migrateDatabase(server.url);
  } catch (err) {
    await stop();
    throw err;
  }
  const u = new URL(server.url);
  u.hostname = hosts.bridgeAddress;
  return { url: server.url, hostsUrl: u.toString(), server, stop };
}
