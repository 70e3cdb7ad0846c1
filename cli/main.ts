#!/usr/bin/env node
// `slotkeeper`: the CLI's entry (docs/cli.md); the program itself is cli/run.ts.
import { runCli } from "./run";

/** All of standard input (a password piped in with --password-stdin). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

runCli(process.argv.slice(2), { stdout: (s) => process.stdout.write(`${s}\n`), stderr: (s) => process.stderr.write(`${s}\n`), env: process.env, stdin: readStdin }).then((code) => {
  process.exitCode = code;
});
