// `npm run chaos -- --short --seeds 7,11,23`: the same run once per seed, one after another, each
// a process of its own; prints which seeds failed and the command that replays each.
import { spawnSync } from "node:child_process";

/** Parse `--seeds a,b,c` (positive integers). */
export function parseSeeds(argv: string[]): number[] {
  const i = argv.indexOf("--seeds");
  const seeds = (argv[i + 1] ?? "").split(",").map((x) => Number(x.trim()));
  if (i < 0 || seeds.length === 0 || seeds.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`--seeds needs a comma-separated list of positive integers, got ${argv[i + 1]}`);
  return seeds;
}

/** Run scripts/chaos.ts once per seed with the other arguments; true when every run passed. */
export async function runSeeds(argv: string[]): Promise<boolean> {
  const seeds = parseSeeds(argv);
  const i = argv.indexOf("--seeds");
  const rest = [...argv.slice(0, i), ...argv.slice(i + 2)].filter((a, k, all) => a !== "--seed" && all[k - 1] !== "--seed");
  const failed: number[] = [];
  for (const seed of seeds) {
    const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/chaos.ts", ...rest, "--seed", String(seed)], { stdio: "inherit" });
    if (r.status !== 0) failed.push(seed);
  }
  for (const seed of failed) process.stderr.write(`chaos: seed ${seed} failed; replay with: npm run chaos -- ${[...rest, "--seed", String(seed)].join(" ")}\n`);
  process.stderr.write(`chaos: ${seeds.length - failed.length} of ${seeds.length} seeds passed${failed.length ? ` (failed: ${failed.join(",")})` : ""}\n`);
  return failed.length === 0;
}
