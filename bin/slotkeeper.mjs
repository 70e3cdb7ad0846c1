#!/usr/bin/env node
// The `slotkeeper` bin. In the repository it runs the source (cli/main.ts) through tsx, so it is
// never a stale build; an installed package has no cli/ folder and runs the bundle, dist/cli.js
// (scripts/build-package.ts).
import { existsSync } from "node:fs";

const source = new URL("../cli/main.ts", import.meta.url);
if (existsSync(source)) {
  await import("tsx"); // what `node --import tsx` does: TypeScript from here on
  await import(source.href);
} else {
  await import(new URL("../dist/cli.js", import.meta.url).href);
}
