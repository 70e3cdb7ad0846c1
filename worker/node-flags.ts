/**
 * V8 flags a worker process runs with (`npm run worker`, `npm start`, the benchmark). A worker's
 * garbage is short-lived per-run objects; V8's default young generation let a worker grow to
 * 203–210 MB RSS in the 400,000-run spike, and 8 MB semi-spaces kept both under 200 MB (154–189 MB)
 * at a throughput cost inside the run-to-run noise (npm run bench, 200,000 schedules, two runs
 * each). Keep package.json's "worker" script in step.
 */
export const WORKER_NODE_FLAGS = ["--max-semi-space-size=8"];
