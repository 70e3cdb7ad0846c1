import fs from "node:fs";
import path from "node:path";

const SOURCES = ["app", "components", "lib", "next.config.ts", "package-lock.json", "postcss.config.mjs", "tsconfig.json"];

function newestMtime(p: string): number {
  if (!fs.existsSync(p)) return 0;
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

/** True when there is no production build of the console, or a source changed after it was made. */
export function buildIsStale(): boolean {
  const id = path.join(".next", "BUILD_ID");
  if (!fs.existsSync(id)) return true;
  const built = fs.statSync(id).mtimeMs;
  return SOURCES.some((p) => newestMtime(p) > built);
}
