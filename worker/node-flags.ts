/**
 * V8 flags a worker process runs with (`npm run worker`, `npm start`, the benchmark). A worker's
 * garbage is short-lived per-run objects; capping the young generation's semi-spaces at 8 MB keeps
 * a worker's memory in the spike within its target (docs/benchmarks.md) at no throughput cost the
 * benchmark can tell from noise. Keep package.json's "worker" script in step.
 */
export const WORKER_NODE_FLAGS = ["--max-semi-space-size=8"];
