/**
 * The `command` handler's payload: which program to run and how. Browser-safe (zod only): the API
 * refuses a bad payload when a `command` schedule is saved (400 naming `payload.<field>`), and the
 * worker checks the same schema again before it runs anything.
 *
 *   { "command": "/usr/bin/backup", "args": ["--full"], "env": { "TARGET": "s3://b", "TOKEN": { "$env": "BACKUP_TOKEN" } },
 *     "cwd": "/srv", "timeoutSeconds": 600, "nonRetryableExitCodes": [2], "shell": false, "killGraceSeconds": 10 }
 */
import { z } from "zod";

/** The longest timeoutSeconds: a day (a longer job belongs in a service, not a scheduled program). */
export const MAX_COMMAND_TIMEOUT_SECONDS = 86_400;
/** How long a program has between SIGTERM and SIGKILL, unless its payload says otherwise. */
export const DEFAULT_KILL_GRACE_SECONDS = 10;
/** The longest grace between SIGTERM and SIGKILL a payload may ask for. */
export const MAX_KILL_GRACE_SECONDS = 600;
/** The shell that runs `command` when `shell: true`. */
export const COMMAND_SHELL = "/bin/sh";

/** Variables the worker sets itself; a payload may not set them. */
export const RESERVED_ENV = ["SLOTKEEPER_IDEMPOTENCY_KEY", "SLOTKEEPER_FENCING_TOKEN", "SLOTKEEPER_SLOT", "SLOTKEEPER_RUN_ID", "SLOTKEEPER_SCHEDULE", "SLOTKEEPER_ATTEMPT"];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const noNul = (s: string) => !s.includes("\u0000");

/** A value the worker takes from its own environment: `{ "$env": "NAME" }`. */
const envRef = z.object({ $env: z.string().regex(ENV_NAME, { error: "$env must name an environment variable" }) }).strict();
const text = (what: string, max: number) =>
  z
    .string({ error: `${what} must be a string` })
    .max(max, { error: `${what} must be at most ${max} characters` })
    .refine(noNul, { error: `${what} must not contain a NUL character` });
const textOrRef = (what: string, max: number) => z.union([text(what, max), envRef], { error: `${what} must be a string or { "$env": "NAME" }` });

export const commandPayloadSchema = z
  .object({
    command: text("payload.command", 4096).min(1, { error: "payload.command is required: the program to run (an absolute path, or a shell line with shell: true)" }),
    args: z.array(textOrRef("each of payload.args", 32_768), { error: "payload.args must be a list of strings" }).max(1000, { error: "payload.args holds at most 1000 arguments" }).optional(),
    env: z
      .record(
        z.string().regex(ENV_NAME, { error: "payload.env names must be letters, digits and _ (not starting with a digit)" }).refine((k) => !RESERVED_ENV.includes(k), { error: "payload.env may not set a SLOTKEEPER_ variable the worker sets itself" }),
        textOrRef("each value of payload.env", 32_768),
        { error: 'payload.env must be an object of NAME: "value" (or { "$env": "NAME" })' },
      )
      .optional(),
    cwd: text("payload.cwd", 4096)
      .refine((s) => s.startsWith("/"), { error: "payload.cwd must be an absolute path" })
      .optional(),
    timeoutSeconds: z
      .number({ error: "payload.timeoutSeconds must be a number of seconds" })
      .int({ error: "payload.timeoutSeconds must be a whole number of seconds" })
      .min(1, { error: "payload.timeoutSeconds must be at least 1" })
      .max(MAX_COMMAND_TIMEOUT_SECONDS, { error: `payload.timeoutSeconds must be at most ${MAX_COMMAND_TIMEOUT_SECONDS} (a day)` })
      .optional(),
    nonRetryableExitCodes: z
      .array(z.number({ error: "payload.nonRetryableExitCodes must hold exit codes" }).int({ error: "an exit code is a whole number" }).min(1, { error: "an exit code to treat as final is 1 to 255 (0 is success)" }).max(255, { error: "an exit code is at most 255" }), {
        error: "payload.nonRetryableExitCodes must be a list of exit codes",
      })
      .max(255)
      .optional(),
    shell: z.boolean({ error: "payload.shell must be true or false" }).optional(),
    killGraceSeconds: z
      .number({ error: "payload.killGraceSeconds must be a number of seconds" })
      .int({ error: "payload.killGraceSeconds must be a whole number of seconds" })
      .min(0, { error: "payload.killGraceSeconds must be at least 0" })
      .max(MAX_KILL_GRACE_SECONDS, { error: `payload.killGraceSeconds must be at most ${MAX_KILL_GRACE_SECONDS}` })
      .optional(),
  })
  .strict();

/** A `command` payload as stored (env references unresolved). */
export type CommandPayload = z.infer<typeof commandPayloadSchema>;
/** The same once the worker resolved its `{ "$env" }` references: every value a string. */
export type ResolvedCommandPayload = Omit<CommandPayload, "args" | "env"> & { args?: string[]; env?: Record<string, string> };

/** Why a payload is refused: the message and the field, `payload.<path>`. */
export type PayloadProblem = { message: string; field: string };

/** The first problem of a `command` payload, or null when it is valid. */
export function checkCommandPayload(payload: unknown): PayloadProblem | null {
  const parsed = commandPayloadSchema.safeParse(payload);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const field = ["payload", ...path, issue.keys[0]].join(".");
    return { message: `unknown field "${field}" (a command payload has command, args, env, cwd, timeoutSeconds, nonRetryableExitCodes, shell, killGraceSeconds)`, field };
  }
  const field = ["payload", ...path].join(".");
  return { message: issue.message.startsWith(field) ? issue.message : `${field}: ${issue.message}`, field };
}
