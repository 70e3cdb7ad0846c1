// Test-only: Prometheus's own checker (`promtool`, Debian's prometheus package) as the judge of
// what Slotkeeper exposes, rather than our own parser.
import { spawnSync } from "node:child_process";
import net from "node:net";

export const PROMTOOL = "/usr/bin/promtool";

/** `promtool check metrics` on exposition text: its exit status and what it printed (lint problems). */
export function promtoolCheckMetrics(text: string): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

/** `promtool check rules FILE`. */
export function promtoolCheckRules(file: string): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, ["check", "rules", file], { encoding: "utf8" });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}

/** A TCP port on 127.0.0.1 free right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
