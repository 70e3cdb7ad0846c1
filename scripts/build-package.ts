// `npm pack` (prepack) and `npm run build:package`: the installable package in dist/.
//   dist/worker.js, dist/client.js   ESM bundles of worker/package.ts and lib/client/slotkeeper-client.ts (esbuild), dependencies left as imports
//   dist/cli.js                      the `slotkeeper` CLI (cli/main.ts, keeping its #!/usr/bin/env node line), run by bin/slotkeeper.mjs
//   dist/types/**.d.ts               their type declarations (tsc -p tsconfig.package.json)
//   dist/package.json                { "type": "module" }, so Node and TypeScript read both as ES modules
// The console's build (next build) is not involved; the repository's own code keeps running from source.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const root = path.resolve(__dirname, "..");
const dist = path.join(root, "dist");
fs.rmSync(dist, { recursive: true, force: true });

async function main() {
  await build({
    absWorkingDir: root,
    entryPoints: { worker: "worker/package.ts", client: "lib/client/slotkeeper-client.ts", cli: "cli/main.ts" },
    outdir: dist,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    // The package's dependencies are installed beside it: import them, do not copy them in.
    packages: "external",
    tsconfig: path.join(root, "tsconfig.json"),
    logLevel: "warning",
  });
  fs.writeFileSync(path.join(dist, "package.json"), `${JSON.stringify({ type: "module" }, null, 2)}\n`);
  if (!fs.readFileSync(path.join(dist, "cli.js"), "utf8").startsWith("#!/usr/bin/env node\n")) throw new Error("dist/cli.js lost its #!/usr/bin/env node line");
  fs.chmodSync(path.join(dist, "cli.js"), 0o755);

  const tsc = spawnSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", path.join(root, "tsconfig.package.json")], { stdio: "inherit", cwd: root });
  if (tsc.status !== 0) throw new Error("tsc could not emit the package's type declarations");

  // ES-module declarations need the extension on every relative import, as the JavaScript would:
  // `../lib/config` → `../lib/config.js`, a folder → `…/index.js`.
  const typesDir = path.join(dist, "types");
  for (const file of fs.readdirSync(typesDir, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".d.ts")) continue;
    const full = path.join(typesDir, file);
    const text = fs.readFileSync(full, "utf8");
    const fixed = text.replace(/(from\s+|import\()(["'])(\.\.?\/[^"']+)\2/g, (match, lead: string, quote: string, spec: string) => {
      if (/\.(js|json)$/.test(spec)) return match;
      const target = path.resolve(path.dirname(full), spec);
      const resolved = fs.existsSync(`${target}.d.ts`) ? `${spec}.js` : fs.existsSync(path.join(target, "index.d.ts")) ? `${spec}/index.js` : null;
      if (!resolved) throw new Error(`${file}: cannot resolve ${spec} among the emitted declarations`);
      return `${lead}${quote}${resolved}${quote}`;
    });
    if (fixed !== text) fs.writeFileSync(full, fixed);
  }
  console.log(`package built in ${path.relative(root, dist)}/: worker.js, client.js, cli.js, types/`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
