// The real console process (`next start`) against the chaos database: API changes must be
// acknowledged by a process that commits them, or "lost acks after a restart" means nothing.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { portIsFree } from "../../lib/db/embedded";
import { buildIsStale } from "../build-state";

const require = createRequire(path.join(process.cwd(), "package.json"));

/**
 * Build the console when it is missing or stale (only when missing under SLOTKEEPER_SKIP_BUILD=1).
 * When another `next build` holds the folder, wait up to ten minutes for its BUILD_ID instead.
 */
export async function ensureBuild(log: (line: string) => void): Promise<void> {
  if (process.env.SLOTKEEPER_SKIP_BUILD === "1" && fs.existsSync(".next/BUILD_ID")) return;
  if (!buildIsStale()) return;
  log("chaos: building the console (next build)…");
  const r = spawnSync(process.execPath, [require.resolve("next/dist/bin/next"), "build"], { stdio: ["ignore", "ignore", "inherit"] });
  if (r.status === 0) return;
  log("chaos: next build failed; waiting for a build another process may be running");
  for (let i = 0; i < 600 && !fs.existsSync(".next/BUILD_ID"); i++) await new Promise((res) => setTimeout(res, 1000));
  if (!fs.existsSync(".next/BUILD_ID")) throw new Error("next build failed and no build appeared");
  await new Promise((res) => setTimeout(res, 5000)); // let the other build finish writing
}

async function freePort(from: number): Promise<number> {
  for (let p = from; p < from + 500; p++) if (await portIsFree(p)) return p;
  throw new Error("no free port for the console");
}

export type WebServer = { baseUrl: string; child: ChildProcess; stop: () => Promise<void> };

/** Start `next start` on a free loopback port (or the given one, for a restart) and wait for /api/health. */
export async function startWeb(databaseUrl: string, logFile: string, atPort?: number): Promise<WebServer> {
  const port = atPort ?? (await freePort(3300));
  const out = fs.openSync(logFile, "a");
  const child = spawn(process.execPath, [require.resolve("next/dist/bin/next"), "start", "-H", "127.0.0.1", "-p", String(port)], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: "info" },
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the console exited during start; see ${logFile}`);
    try {
      if ((await fetch(`${baseUrl}/api/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("the console did not become healthy in 90 s");
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    baseUrl,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((r) => {
        const t = setTimeout(() => {
          child.kill("SIGKILL");
          r(null);
        }, 5000);
        child.once("exit", () => {
          clearTimeout(t);
          r(null);
        });
      });
    },
  };
}
