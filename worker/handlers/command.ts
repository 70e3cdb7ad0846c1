import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { CommandsPolicy } from "../../lib/config";
import { checkCommandPayload, COMMAND_SHELL, DEFAULT_KILL_GRACE_SECONDS, type ResolvedCommandPayload } from "../../lib/handlers/command-payload";
import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler, NonRetryableError, type HandlerContext } from "../../lib/handlers/types";
import { StreamTail } from "../../lib/runs/output";
import { isSensitiveKey } from "../../lib/security/mask";
import { ATTEMPT_STREAMS, type AttemptStreams } from "../attempt-output";
import { killGroupsOnExit, signalGroup } from "./process-group";

const info = BUILTIN_HANDLERS.find((h) => h.name === "command")!;

/** The worker's own settings and credentials, which a program does not inherit: its database, its passwords, its SLOTKEEPER_* settings. */
const isWorkerOwn = (name: string) => name === "DATABASE_URL" || name === "DATABASE_READ_URL" || name.startsWith("SLOTKEEPER_");

/** Why a program may not run on this worker, or null when it may. `executable` is what would be executed: the command, or the shell. */
export function refusal(policy: Exclude<CommandsPolicy, null>, executable: string, shell: boolean): string | null {
  if (policy === "all") return null;
  const what = shell ? `shell: true runs ${COMMAND_SHELL}, which` : `${JSON.stringify(executable)}`;
  if (!path.isAbsolute(executable)) return `${what} is not an absolute path; this worker runs only the executables SLOTKEEPER_COMMANDS lists (${policy.join(", ")})`;
  if (!policy.includes(path.normalize(executable))) return `${what} is not in this worker's SLOTKEEPER_COMMANDS (${policy.join(", ")})`;
  return null;
}

/** The program's environment: the worker's, less its own settings, then the payload's, then the run's identity. */
function programEnv(ctx: HandlerContext, p: ResolvedCommandPayload): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !isWorkerOwn(k)) env[k] = v;
  Object.assign(env, p.env ?? {});
  env.SLOTKEEPER_IDEMPOTENCY_KEY = ctx.idempotencyKey;
  env.SLOTKEEPER_FENCING_TOKEN = String(ctx.fencingToken);
  env.SLOTKEEPER_SLOT = ctx.slot.toISOString();
  env.SLOTKEEPER_RUN_ID = String(ctx.runId);
  env.SLOTKEEPER_SCHEDULE = ctx.schedule.name;
  env.SLOTKEEPER_ATTEMPT = String(ctx.attempt);
  return env;
}

/** A TimeoutError: the attempt is recorded `timed_out` and retried (worker/attempt.ts). */
class CommandTimeout extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TimeoutError";
  }
}

/**
 * The `command` handler: runs a program, without a shell unless `shell: true`, in a process group
 * of its own. Exit 0 succeeds (the result is `{ exitCode: 0 }`); an exit code in
 * nonRetryableExitCodes fails for good; any other code, or death by a signal, retries. On abort
 * (lease lost, lease deadline, shutdown) or past payload.timeoutSeconds the whole group gets
 * SIGTERM, then SIGKILL after killGraceSeconds (default 10); when the program exits, whatever it
 * left running in its group is ended the same way. Its stdout and stderr tails go with the attempt.
 */
export function commandHandler(policy: Exclude<CommandsPolicy, null>) {
  return defineHandler<ResolvedCommandPayload>({
    ...info,
    run: (ctx) => {
      const problem = checkCommandPayload(ctx.payload);
      if (problem) throw new NonRetryableError(`command handler: ${problem.message}`);
      const p = ctx.payload;
      const shell = p.shell === true;
      const executable = shell ? COMMAND_SHELL : p.command;
      const refused = refusal(policy, executable, shell);
      if (refused) throw new NonRetryableError(`command handler on worker ${ctx.workerId}: ${refused}`);
      if (p.cwd !== undefined && !fs.statSync(p.cwd, { throwIfNoEntry: false })?.isDirectory()) {
        throw new NonRetryableError(`command handler: payload.cwd ${JSON.stringify(p.cwd)} is not a directory on worker ${ctx.workerId}`);
      }
      const streams = (ctx as HandlerContext & { [ATTEMPT_STREAMS]?: AttemptStreams })[ATTEMPT_STREAMS] ?? { stdout: new StreamTail(), stderr: new StreamTail(), addSecrets: () => {} };
      const env = programEnv(ctx, p);
      // What the program inherits from the worker under a sensitive name is masked in its output too.
      streams.addSecrets(Object.entries(process.env).filter(([k, v]) => v !== undefined && !isWorkerOwn(k) && isSensitiveKey(k)).map(([, v]) => v!));
      const args = shell ? ["-c", p.command, "slotkeeper", ...(p.args ?? [])] : (p.args ?? []);
      return runProgram(ctx, executable, args, { cwd: p.cwd, env, streams, graceMs: (p.killGraceSeconds ?? DEFAULT_KILL_GRACE_SECONDS) * 1000, timeoutSeconds: p.timeoutSeconds, nonRetryable: p.nonRetryableExitCodes ?? [] });
    },
  });
}

type RunOptions = { cwd?: string; env: Record<string, string>; streams: AttemptStreams; graceMs: number; timeoutSeconds?: number; nonRetryable: number[] };

function runProgram(ctx: HandlerContext, executable: string, args: string[], o: RunOptions): Promise<{ exitCode: number }> {
  return new Promise((resolve, reject) => {
    // detached: the program leads a new process group (setsid), so one signal to -pid reaches it
    // and every child it forks (unless a child makes a session of its own).
    const child = spawn(executable, args, { cwd: o.cwd, env: o.env as NodeJS.ProcessEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk: Buffer) => o.streams.stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => o.streams.stderr.push(chunk));
    const pid = child.pid;
    let stopReason: { kind: "abort" | "timeout"; message: string } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let timeoutTimer: NodeJS.Timeout | undefined;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const forgetGroup = pid === undefined ? () => {} : killGroupsOnExit(pid);

    /** SIGTERM to the whole group now, SIGKILL after the grace unless the group is gone by then. */
    const terminateGroup = () => {
      if (pid === undefined || killTimer) return;
      if (!signalGroup(pid, "SIGTERM")) return forgetGroup();
      // Not cleared when the program's pipes close: a child that ignores SIGTERM may have closed them.
      killTimer = setTimeout(() => {
        signalGroup(pid, "SIGKILL");
        forgetGroup();
      }, o.graceMs);
      killTimer.unref();
    };
    const stop = (kind: "abort" | "timeout", message: string) => {
      stopReason ??= { kind, message };
      terminateGroup();
    };
    const onAbort = () => stop("abort", `aborted (${ctx.signal.reason instanceof Error ? ctx.signal.reason.message : "signal"}): the program's process group got SIGTERM, SIGKILL after ${o.graceMs} ms`);
    if (ctx.signal.aborted) onAbort();
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
    if (o.timeoutSeconds !== undefined) {
      timeoutTimer = setTimeout(() => stop("timeout", `command timed out after ${o.timeoutSeconds} s (payload.timeoutSeconds): its process group got SIGTERM, SIGKILL after ${o.graceMs} ms`), o.timeoutSeconds * 1000);
    }

    const settle = () => {
      clearTimeout(timeoutTimer);
      ctx.signal.removeEventListener("abort", onAbort);
      if (!killTimer) forgetGroup();
    };
    child.once("error", (err: NodeJS.ErrnoException) => {
      // The program could not be started (not found, not executable): retrying on this worker cannot help.
      if (exited) return;
      settle();
      const why = err.code === "ENOENT" ? "not found" : err.code === "EACCES" ? "not executable (permission denied)" : err.message;
      reject(new NonRetryableError(`command ${JSON.stringify(executable)} could not be started on worker ${ctx.workerId}: ${why}`, { cause: err }));
    });
    child.once("exit", (code, signal) => {
      exited = { code, signal };
      // Whatever the program left running in its group goes too (the stdio pipes stay open while it lives).
      terminateGroup();
    });
    child.once("close", () => {
      if (!exited) return;
      settle();
      const { code, signal } = exited;
      if (stopReason?.kind === "timeout") return reject(new CommandTimeout(stopReason.message));
      if (stopReason?.kind === "abort") return reject(new Error(stopReason.message));
      if (code === 0) return resolve({ exitCode: 0 });
      if (code !== null && o.nonRetryable.includes(code)) return reject(new NonRetryableError(`command exited with code ${code} (listed in payload.nonRetryableExitCodes)`));
      reject(new Error(code !== null ? `command exited with code ${code}` : `command was killed by signal ${signal}`));
    });
  });
}
