import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { workerNodeArgs } from "./node-flags";

// `npm run worker` cannot import the flags (package.json holds its command line), so it must be
// kept in step by hand: a worker started the documented way runs with the memory the benchmark measured.
describe("the worker's V8 flags and loader", () => {
  it("are those `npm run worker` starts a worker with", () => {
    const { scripts } = JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    expect(scripts.worker.split(/\s+/)).toEqual(["node", ...workerNodeArgs()]);
  });

  it("start a worker without tsx's ES-module loader thread", () => {
    // The oracle is the kernel's count of the process's threads: the worker's arguments start as
    // many as plain node, and `--import tsx` more (its loader thread).
    const threads = (nodeArgs: string[]) => {
      const out = execFileSync(process.execPath, [...nodeArgs, "-e", THREADS_AFTER_LOAD], { encoding: "utf8" });
      return Number(out.trim());
    };
    const plain = threads([]);
    expect(threads(workerNodeArgs().slice(0, -1))).toBe(plain);
    expect(threads(["--import", "tsx"])).toBeGreaterThan(plain);
  });
});

// Prints the process's thread count as its code begins: a loader thread is up before that (Node
// starts it while it handles --import, before the entry point runs).
const THREADS_AFTER_LOAD = `console.log(/Threads:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status", "utf8"))[1])`;
