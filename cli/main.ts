#!/usr/bin/env node
// `slotkeeper`: the CLI's entry (docs/cli.md); the program itself is cli/run.ts.
import { runCli } from "./run";

runCli(process.argv.slice(2), { stdout: (s) => process.stdout.write(`${s}\n`), stderr: (s) => process.stderr.write(`${s}\n`), env: process.env }).then((code) => {
  process.exitCode = code;
});
