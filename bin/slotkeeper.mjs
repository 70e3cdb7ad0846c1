#!/usr/bin/env node
// The `slotkeeper` bin. An installed package runs the bundle (dist/cli.js, built by
// scripts/build-package.ts); in the repository, where dist/ may not be built, the source through tsx.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.js", import.meta.url);
if (existsSync(bundle)) {
  await import(bundle.href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(new URL("../cli/main.ts", import.meta.url).href);
}
