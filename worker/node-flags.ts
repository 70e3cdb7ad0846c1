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
