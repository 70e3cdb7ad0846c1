// The `command` handler with real programs: exit codes, signals, the environment it hands over, no
// shell unless asked, the allow-list, the process group on abort and timeout, and the output tails.
// Each attempt goes through runAttempt, as in a worker, so the output is what a finish would store.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CommandsPolicy } from "../../lib/config";
import { createLogger } from "../../lib/log";
import type { ClaimedRun } from "../../lib/runs/claim";
import type { RunResult } from "../../lib/runs/finish";
import { STREAM_MAX_BYTES } from "../../lib/runs/output";
import { MASK } from "../../lib/security/mask";
import { runAttempt } from "../attempt";
import { AttemptAbort, AttemptAborted } from "../attempt-abort";
import { builtinHandlers, createHandlerRegistry } from "./registry";

const log = createLogger("test", "silent");
const NODE = process.execPath;
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "sk-command-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A small Node program in the temp folder; returns its path. */
function program(name: string, source: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, source);
  return file;
}

const claimed = (payload: unknown, attempt = 3): ClaimedRun =>
  ({
    id: 41,
    scheduleId: 9,
    scheduleName: "nightly-backup",
    handler: "command",
    payload,
    payloadRefersToEnv: true,
    scheduledFor: new Date("2031-03-04T02:00:00Z"),
    attempt,
    leaseSeconds: 60,
    origin: "schedule",
    retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 },
    maxAttempts: 6,
  }) as unknown as ClaimedRun;

/** Run one attempt of a `command` run with this payload on a worker allowed `policy`. */
async function attempt(payload: unknown, opts: { policy?: CommandsPolicy; abort?: AttemptAbort } = {}): Promise<RunResult> {
  const handlers = builtinHandlers(null as never, { commands: opts.policy === undefined ? "all" : opts.policy });
  const registry = createHandlerRegistry(handlers);
  return runAttempt(claimed(payload), { registry, workerId: "w-test", log }, opts.abort ?? new AttemptAbort());
}

/** kill -0, and not a zombie (an orphan's zombie may wait for a reaper that never comes in a container). */
function alive(pid: number): boolean {
  if (spawnSync("kill", ["-0", String(pid)]).status !== 0) return false;
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("command handler: outcomes", () => {
  it("exit 0 succeeds with its stdout and stderr kept; the result says the exit code", async () => {
    const r = await attempt({ command: "/bin/sh", args: ["-c", "echo out-line; echo err-line >&2"] });
    expect(r.outcome).toBe("succeeded");
    expect(r.output).toEqual({ result: '{"exitCode":0}', log: null, stdout: "out-line\n", stderr: "err-line\n" });
  });

  it("another exit code retries; a listed one fails for good; a signal retries", async () => {
    const retried = await attempt({ command: "/bin/sh", args: ["-c", "echo partial; exit 3"] });
    expect(retried).toMatchObject({ outcome: "failed", error: "command exited with code 3" });
    expect(retried.nonRetryable).toBeUndefined();
    expect(retried.retryDelaySeconds).toBeGreaterThanOrEqual(0);
    expect(retried.output?.stdout).toBe("partial\n");

    const final = await attempt({ command: "/bin/sh", args: ["-c", "exit 2"], nonRetryableExitCodes: [2, 9] });
    expect(final).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(final.error).toContain("exited with code 2");

    const signalled = await attempt({ command: "/bin/sh", args: ["-c", "kill -SEGV $$"], nonRetryableExitCodes: [139] });
    expect(signalled).toMatchObject({ outcome: "failed", error: "command was killed by signal SIGSEGV" });
    expect(signalled.nonRetryable).toBeUndefined();
  });

  it("a program that is not there fails for good, naming it", async () => {
    const r = await attempt({ command: path.join(dir, "no-such-program") });
    expect(r).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(r.error).toContain("not found");
    const cwd = await attempt({ command: "/bin/true", cwd: path.join(dir, "no-such-dir") });
    expect(cwd).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(cwd.error).toContain("payload.cwd");
  });

  it("an invalid payload (stored before validation, say) fails for good, naming the field", async () => {
    const r = await attempt({ command: "/bin/true", args: "--full" });
    expect(r).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(r.error).toContain("payload.args");
  });
});

describe("command handler: what the program is given", () => {
  it("hands over the idempotency key, fencing token, slot, run and schedule; the payload's env with $env resolved; not the worker's own settings", async () => {
    // FROM_REF's value came from the worker's environment: printed as it is, it is masked in the
    // output; reversed, it shows it arrived.
    const show = program(
      "env.mjs",
      `const e = Object.fromEntries(Object.entries(process.env).filter(([k]) => /^(SLOTKEEPER_|DATABASE_|GREETING|FROM_REF|PATH$)/.test(k)));
       e.FROM_REF_REVERSED = [...(process.env.FROM_REF ?? "")].reverse().join(""); console.log(JSON.stringify(e));`,
    );
    process.env.SK_TEST_REFERRED = "from-the-worker";
    process.env.SLOTKEEPER_OPERATOR_PASSWORD = "worker-only-setting";
    const r = await attempt({ command: NODE, args: [show], env: { GREETING: "hello", FROM_REF: { $env: "SK_TEST_REFERRED" } }, cwd: dir });
    delete process.env.SLOTKEEPER_OPERATOR_PASSWORD;
    expect(r.outcome).toBe("succeeded");
    const env = JSON.parse(r.output!.stdout!);
    expect(env).toMatchObject({
      SLOTKEEPER_IDEMPOTENCY_KEY: "sk:9:2031-03-04T02:00:00.000Z",
      SLOTKEEPER_FENCING_TOKEN: "3",
      SLOTKEEPER_SLOT: "2031-03-04T02:00:00.000Z",
      SLOTKEEPER_RUN_ID: "41",
      SLOTKEEPER_SCHEDULE: "nightly-backup",
      SLOTKEEPER_ATTEMPT: "3",
      GREETING: "hello",
      FROM_REF: MASK,
      FROM_REF_REVERSED: "rekrow-eht-morf",
    });
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.SLOTKEEPER_OPERATOR_PASSWORD).toBeUndefined();
    expect(env.DATABASE_URL).toBeUndefined();
  });

  it("runs in payload.cwd", async () => {
    const r = await attempt({ command: "/bin/pwd", cwd: dir });
    expect(r.output?.stdout?.trim()).toBe(fs.realpathSync(dir));
  });

  it("uses no shell by default: an argument with ; and $( ) is handed over as it is", async () => {
    const marker = path.join(dir, "injected");
    const r = await attempt({ command: "/bin/echo", args: [`a; touch ${marker}`, "$(id -u)", "*"] });
    expect(r.outcome).toBe("succeeded");
    expect(r.output?.stdout).toBe(`a; touch ${marker} $(id -u) *\n`);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it("shell: true runs the command as a /bin/sh line, with args as $1…", async () => {
    const r = await attempt({ command: 'echo "first=$1 fence=$SLOTKEEPER_FENCING_TOKEN"; echo second | tr a-z A-Z', args: ["x y"], shell: true });
    expect(r.outcome).toBe("succeeded");
    expect(r.output?.stdout).toBe("first=x y fence=3\nSECOND\n");
  });
});

describe("command handler: SLOTKEEPER_COMMANDS", () => {
  it("runs listed executables only; a listed path written another way is the same path", async () => {
    expect((await attempt({ command: "/bin/echo", args: ["ok"] }, { policy: ["/bin/echo"] })).outcome).toBe("succeeded");
    expect((await attempt({ command: "/bin//echo", args: ["ok"] }, { policy: ["/bin/echo"] })).outcome).toBe("succeeded");
    const refused = await attempt({ command: "/bin/cat", args: ["/etc/hostname"] }, { policy: ["/bin/echo"] });
    expect(refused).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(refused.error).toContain("not in this worker's SLOTKEEPER_COMMANDS (/bin/echo)");
    expect(refused.output).toBeUndefined();
    const relative = await attempt({ command: "echo" }, { policy: ["/bin/echo"] });
    expect(relative.error).toContain("not an absolute path");
  });

  it("shell: true needs the shell on the list (or all)", async () => {
    const refused = await attempt({ command: "echo hi", shell: true }, { policy: ["/bin/echo"] });
    expect(refused).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(refused.error).toContain("/bin/sh");
    expect((await attempt({ command: "echo hi", shell: true }, { policy: ["/bin/sh"] })).outcome).toBe("succeeded");
  });

  it("a worker without SLOTKEEPER_COMMANDS has no command handler, and a command run there says why", async () => {
    const names = builtinHandlers(null as never, { commands: null }).map((h) => h.name);
    expect(names).not.toContain("command");
    expect(builtinHandlers(null as never, { commands: "all" }).map((h) => h.name)).toContain("command");
    const r = await runAttempt(claimed({ command: "/bin/true" }), { registry: createHandlerRegistry(builtinHandlers(null as never)), workerId: "w", log }, new AttemptAbort());
    expect(r).toMatchObject({ outcome: "failed", nonRetryable: true });
    expect(r.error).toContain("SLOTKEEPER_COMMANDS");
  });
});

describe("command handler: stopping a program", () => {
  // The program forks a child that ignores SIGTERM and, once it does, writes both pids to a file;
  // both wait. The leader dies of the SIGTERM at once; the child (which holds the program's stdout
  // and stderr) outlives it until the grace passes and SIGKILL reaches the group.
  const family = (pidFile: string) => `
    import { spawn } from "node:child_process";
    const ready = "require('fs').writeFileSync(" + ${JSON.stringify(JSON.stringify(pidFile))} + ", JSON.stringify({ leader: process.ppid, child: process.pid }))";
    spawn(process.execPath, ["-e", "process.on('SIGTERM', () => {}); " + ready + "; setInterval(() => {}, 1000)"], { stdio: "inherit" });
    setInterval(() => {}, 1000);`;

  async function pidsFrom(run: Promise<RunResult>, file: string): Promise<{ leader: number; child: number }> {
    await until(() => fs.existsSync(file) && fs.readFileSync(file, "utf8").includes("}"), 20_000, "the program to print its pids");
    void run;
    return JSON.parse(fs.readFileSync(file, "utf8"));
  }

  it("on abort the process group gets SIGTERM, and a child that ignores it gets SIGKILL after the grace", async () => {
    const pidFile = path.join(dir, "family-abort.json");
    const script = program("family.mjs", family(pidFile));
    const abort = new AttemptAbort();
    const running = Promise.resolve(attempt({ command: NODE, args: [script], killGraceSeconds: 5 }, { abort }));
    const { leader, child } = await pidsFrom(running, pidFile);
    expect(alive(leader) && alive(child)).toBe(true);
    const abortedAt = Date.now();
    abort.abort(new AttemptAborted("lease_lost", "lease lost: test"));
    const r = await running;
    expect(r).toMatchObject({ outcome: "timed_out", error: "lease lost: test" });
    await until(() => !alive(leader), 5_000, "the leader to die of SIGTERM");
    // Within the grace the child that ignores SIGTERM is still there…
    expect(alive(child)).toBe(true);
    // …and after it, SIGKILL has reached it.
    await until(() => !alive(child), 10_000, "the child to get SIGKILL");
    expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(4900);
  });

  it("past payload.timeoutSeconds the group is stopped the same way and the attempt is timed_out (retried)", async () => {
    const pidFile = path.join(dir, "family-timeout.json");
    // A shell family: it starts in milliseconds even on a loaded machine, so the pids are written
    // well before the timeout. The leader loops; its background child ignores SIGTERM.
    const childScript = program("family-timeout-child.sh", `trap '' TERM\nprintf '{"leader":%s,"child":%s}' "$PPID" "$$" > '${pidFile}'\nwhile :; do sleep 1; done\n`);
    const leaderScript = program("family-timeout.sh", `/bin/sh '${childScript}' &\nwhile :; do sleep 1; done\n`);
    const running = Promise.resolve(attempt({ command: "/bin/sh", args: [leaderScript], timeoutSeconds: 3, killGraceSeconds: 1 }));
    const { leader, child } = await pidsFrom(running, pidFile);
    const r = await running;
    expect(r.outcome).toBe("timed_out");
    expect(r.error).toContain("timed out after 3 s");
    expect(r.nonRetryable).toBeUndefined();
    expect(r.retryDelaySeconds).toBeGreaterThanOrEqual(0);
    // The attempt ends when the group's pipes close: the child needed the SIGKILL.
    await until(() => !alive(leader) && !alive(child), 5_000, "the group to be gone");
  });

  it("what a program that exits 0 leaves running in its group is ended too", async () => {
    const pidFile = path.join(dir, "leftover.json");
    const script = program(
      "leftover.mjs",
      `import { spawn } from "node:child_process"; import fs from "node:fs";
       const c = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
       fs.writeFileSync(${JSON.stringify(pidFile)}, JSON.stringify({ child: c.pid })); process.exit(0);`,
    );
    const r = await attempt({ command: NODE, args: [script], killGraceSeconds: 1 });
    expect(r.outcome).toBe("succeeded");
    const { child } = JSON.parse(fs.readFileSync(pidFile, "utf8"));
    await until(() => !alive(child), 5_000, "the leftover child to be ended");
  });
});

describe("command handler: output", () => {
  it("keeps the last 64 KB of each stream, says how much came before, and masks secrets across the cut", async () => {
    process.env.SK_TEST_BACKUP_TOKEN = "tok-7f3a9c2e51";
    // 200 KB of numbered lines with the secret throughout, and a sensitive assignment at the end.
    const script = program(
      "chatty.mjs",
      `const t = process.env.BACKUP_TOKEN; let s = ""; for (let i = 0; i < 4000; i++) s += "line " + String(i).padStart(5, "0") + " uses " + t + " ok\\n";
       process.stdout.write(s); process.stdout.write("password=hunter2hunter\\n"); process.stderr.write("warning " + t + "\\n");`,
    );
    const r = await attempt({ command: NODE, args: [script], env: { BACKUP_TOKEN: { $env: "SK_TEST_BACKUP_TOKEN" } } });
    expect(r.outcome).toBe("succeeded");
    const out = r.output!.stdout!;
    expect(Buffer.byteLength(out)).toBeLessThanOrEqual(STREAM_MAX_BYTES + 100);
    expect(Buffer.byteLength(out)).toBeGreaterThan(STREAM_MAX_BYTES - 1000);
    const total = 4000 * "line 00000 uses tok-7f3a9c2e51 ok\n".length + "password=hunter2hunter\n".length;
    const first = out.split("\n")[0];
    expect(first).toBe(`[… ${total} bytes written; the earlier ones are not kept]`);
    // The lines kept are the last ones, whole and in order, ending with the last line written.
    const kept = out.split("\n").slice(1, -2);
    expect(kept.at(-1)).toBe(`line 03999 uses ${MASK} ok`);
    const firstKept = Number(kept[0].slice(5, 10));
    expect(kept).toEqual(Array.from({ length: 4000 - firstKept }, (_, i) => `line ${String(firstKept + i).padStart(5, "0")} uses ${MASK} ok`));
    expect(out.endsWith(`password=${MASK}\n`)).toBe(true);
    expect(out).not.toContain("tok-7f3a9c2e51");
    expect(out).not.toContain("hunter2");
    expect(r.output!.stderr).toBe(`warning ${MASK}\n`);
  });
});
