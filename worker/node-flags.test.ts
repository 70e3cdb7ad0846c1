import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { WORKER_NODE_FLAGS } from "./node-flags";

// `npm run worker` cannot import the flags (package.json holds its command line), so it must be
// kept in step by hand: a worker started the documented way runs with the memory the benchmark measured.
describe("the worker's V8 flags", () => {
  it("are those `npm run worker` starts a worker with", () => {
    const { scripts } = JSON.parse(fs.readFileSync("package.json", "utf8")) as { scripts: Record<string, string> };
    const [node, ...args] = scripts.worker.split(/\s+/);
    expect(node).toBe("node");
    expect(args.slice(0, args.indexOf("--import"))).toEqual(WORKER_NODE_FLAGS);
  });
});
