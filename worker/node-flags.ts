/**
 * V8 flags a worker process runs with (`npm run worker`, `npm start`, the benchmark). A worker's
 * garbage is short-lived per-run objects; capping the young generation's semi-spaces at 8 MB keeps
 * a worker's memory in the spike near its target (docs/benchmarks.md) at no throughput cost the
 * benchmark can tell from noise. The old generation is not capped: with --max-old-space-size=1536
 * V8 grows it less between collections, which kept every worker under the target but cost the
 * spike about a quarter more worker CPU per run (docs/benchmarks.md, "Latest results").
 * Keep package.json's "worker" script in step (node-flags.test.ts).
 */
export const WORKER_NODE_FLAGS = ["--max-semi-space-size=8"];

/**
 * How a worker started from this repository loads its TypeScript: tsx's CommonJS hook, in the
 * worker's own thread. The worker's code is CommonJS (package.json has no "type"), so it needs
 * nothing else; `--import tsx` also registers tsx's ES-module hooks, which Node runs on a loader
 * thread of their own: a second V8 heap, held for as long as the worker runs, that the worker never
 * uses (docs/benchmarks.md, on worker memory). A project that installs the package runs plain
 * JavaScript and needs neither.
 */
export const WORKER_LOADER = ["--require", "tsx/cjs"];

/**
 * Node's arguments for a worker process from this repository: the flags, the loader, then `preload`
 * (TypeScript files required before the worker, e.g. a test's clock skew) and the entry point.
 */
export function workerNodeArgs(entry = "worker/main.ts", preload: readonly string[] = []): string[] {
  return [...WORKER_NODE_FLAGS, ...WORKER_LOADER, ...preload.flatMap((file) => ["--require", file]), entry];
}
