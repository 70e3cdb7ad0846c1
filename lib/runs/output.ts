/**
 * What an attempt leaves for an operator (table attempt_output): the handler's result, the tail of
 * its ctx.log lines and, for programs, the tails of stdout and stderr. Everything here is bounded
 * (a chatty program cannot fill the database) and masked (lib/security/mask.ts) before it is kept.
 *
 *   boundResult({ rows: 3 }, [])          → '{"rows":3}'
 *   boundResult(<40 KB object>, [])       → '{"$truncated":true,"bytes":40960,"head":"{\"rows\":[…"}'
 *   tail of 100 KB of stdout              → "[… 102400 bytes written; the earlier ones are not kept]\n" + the last 64 KB
 */
import { formatWithOptions } from "node:util";
import { z } from "zod";
import { maskOutputValue, maskText } from "../security/mask";

/** Largest result kept, in bytes of JSON; a larger one is kept as a truncation marker with its head. */
export const RESULT_MAX_BYTES = 16 * 1024;
/** ctx.log lines kept per attempt: the last this many … */
export const LOG_MAX_LINES = 200;
/** … and at most this many bytes of them. */
export const LOG_MAX_BYTES = 64 * 1024;
/** Bytes kept of each of a program's stdout and stderr: the last ones. */
export const STREAM_MAX_BYTES = 64 * 1024;
/** Longest single ctx.log line kept (its JSON); a longer one is cut with a marker. */
export const LOG_LINE_MAX_BYTES = 8 * 1024;

/** One attempt's output as the finish stores it: JSON text for result and log, plain text for the streams; null where there is none. */
export type AttemptOutput = { result: string | null; log: string | null; stdout: string | null; stderr: string | null };

const utf8 = new TextEncoder();
const byteLength = (s: string) => Buffer.byteLength(s, "utf8");

/** `s` cut to at most `maxBytes` bytes of UTF-8 from its start, never inside a character. */
export function headOfText(s: string, maxBytes: number): string {
  if (s.length <= maxBytes / 3 || utf8.encode(s).length <= maxBytes) return s;
  const bytes = utf8.encode(s).subarray(0, maxBytes);
  return new TextDecoder().decode(bytes).replace(/\uFFFD$/, "");
}

/**
 * A handler's return value as the JSON text to keep, masked; null when it returned nothing
 * (undefined or null). Over RESULT_MAX_BYTES it becomes `{ "$truncated": true, "bytes", "head" }`
 * (the head is the start of the JSON text): the attempt still succeeds. A value JSON cannot hold
 * (a BigInt, a cycle) is kept as `{ "$unserializable": message }`.
 */
export function boundResult(value: unknown, secrets: readonly string[]): string | null {
  if (value === undefined || value === null) return null;
  let plain: unknown;
  try {
    const json = JSON.stringify(value);
    if (json === undefined) return null; // a function or a symbol: nothing JSON can say
    plain = JSON.parse(json);
  } catch (err) {
    return JSON.stringify({ $unserializable: err instanceof Error ? err.message : String(err) });
  }
  const json = JSON.stringify(maskOutputValue(plain, secrets));
  const bytes = byteLength(json);
  if (bytes <= RESULT_MAX_BYTES) return json;
  // The head is a JSON string inside the marker, and escaping can grow it: shrink until it fits.
  let budget = RESULT_MAX_BYTES - 100;
  for (;;) {
    const marker = JSON.stringify({ $truncated: true, bytes, head: headOfText(json, budget) });
    const over = byteLength(marker) - RESULT_MAX_BYTES;
    if (over <= 0) return marker;
    budget -= over + 16;
  }
}

/** A ctx.log line as kept: when, level, message and the fields it was given (the run's own bindings left out). */
export const logLineSchema = z.object({ time: z.string(), level: z.string(), msg: z.string().optional() }).catchall(z.unknown());
export type LogLine = z.infer<typeof logLineSchema>;

const serializeError = (err: Error): Record<string, unknown> => ({ type: err.name, message: err.message, ...(err.stack ? { stack: err.stack } : {}) });

/** The arguments of a pino call (`(obj, msg, ...args)`, `(msg, ...args)`, `(err, msg)`) as one line; `bindings` (a child logger's) come first. */
export function logLineOf(level: string, args: unknown[], bindings: Record<string, unknown> = {}, at: Date = new Date()): LogLine {
  let fields: Record<string, unknown> = { ...bindings };
  let rest = args;
  const first = args[0];
  if (first instanceof Error) {
    fields.err = serializeError(first);
    rest = args.slice(1);
    if (rest.length === 0) rest = [first.message];
  } else if (typeof first === "object" && first !== null) {
    for (const [k, v] of Object.entries(first)) fields[k] = v instanceof Error ? serializeError(v) : v;
    rest = args.slice(1);
  }
  const msg = rest.length === 0 ? undefined : typeof rest[0] === "string" ? formatWithOptions({ breakLength: Infinity }, ...(rest as [string, ...unknown[]])) : String(rest[0]);
  const line: LogLine = { time: at.toISOString(), level };
  if (msg !== undefined) line.msg = msg;
  else if (typeof fields.msg === "string") line.msg = fields.msg;
  for (const [k, v] of Object.entries(fields)) if (k !== "msg" && k !== "time" && k !== "level") line[k] = v;
  return line;
}

/** The last LOG_MAX_LINES lines of ctx.log, at most LOG_MAX_BYTES of them, each masked as it comes. */
export class LogTail {
  private lines: string[] = [];
  private bytes = 0;
  private dropped = 0;

  constructor(private readonly secrets: () => readonly string[]) {}

  /** Keep one line (JSON), dropping the oldest beyond the bounds. */
  push(line: LogLine): void {
    let json: string;
    try {
      json = JSON.stringify(maskOutputValue(JSON.parse(JSON.stringify(line)), this.secrets()));
    } catch (err) {
      json = JSON.stringify({ time: line.time, level: line.level, msg: `(log line not serialisable: ${err instanceof Error ? err.message : String(err)})` });
    }
    if (byteLength(json) > LOG_LINE_MAX_BYTES) json = JSON.stringify({ time: line.time, level: line.level, msg: `${headOfText(String(line.msg ?? ""), LOG_LINE_MAX_BYTES / 2)}… [line of ${json.length} characters cut]` });
    const size = byteLength(json) + 1;
    this.lines.push(json);
    this.bytes += size;
    while (this.lines.length > LOG_MAX_LINES || this.bytes > LOG_MAX_BYTES) {
      this.bytes -= byteLength(this.lines.shift()!) + 1;
      this.dropped++;
    }
  }

  /** The kept lines as a JSON array (with a first line saying how many earlier ones were dropped), or null when nothing was logged. */
  toJson(): string | null {
    if (this.lines.length === 0) return null;
    const head = this.dropped > 0 ? [JSON.stringify({ time: JSON.parse(this.lines[0]).time, level: "info", msg: `[${this.dropped} earlier line${this.dropped === 1 ? "" : "s"} not kept]` })] : [];
    return `[${[...head, ...this.lines].join(",")}]`;
  }
}

/**
 * The last STREAM_MAX_BYTES of a byte stream (a program's stdout or stderr). It holds a little
 * more than it keeps, so that a secret cut in two by the bound is masked before the cut and
 * never shows half of itself.
 */
export class StreamTail {
  private chunks: Buffer[] = [];
  private held = 0;
  private total = 0;

  constructor(
    private readonly maxBytes = STREAM_MAX_BYTES,
    private readonly marginBytes = 4096,
  ) {}

  /** Bytes written so far, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    this.chunks.push(chunk);
    this.held += chunk.length;
    const cap = this.maxBytes + this.marginBytes;
    while (this.held - this.chunks[0].length >= cap) this.held -= this.chunks.shift()!.length;
  }

  /** The kept tail as masked text (with a first line saying how much came before), or null when nothing was written. */
  text(secrets: readonly string[]): string | null {
    if (this.total === 0) return null;
    let buf = Buffer.concat(this.chunks);
    const cut = buf.length > this.maxBytes;
    if (cut) buf = buf.subarray(buf.length - (this.maxBytes + Math.min(this.marginBytes, buf.length - this.maxBytes)));
    let text = maskText(buf.toString("utf8"), secrets);
    if (!cut) return text;
    // Drop the margin after masking: a secret the margin's start cut in two is in what is dropped.
    const masked = Buffer.from(text, "utf8");
    if (masked.length > this.maxBytes) text = masked.subarray(masked.length - this.maxBytes).toString("utf8").replace(/^\uFFFD+/, "");
    // Begin at a line when one starts soon, so the first kept line is whole.
    const nl = text.indexOf("\n");
    if (nl >= 0 && nl < 200) text = text.slice(nl + 1);
    return `[… ${this.total} bytes written; the earlier ones are not kept]\n${text}`;
  }
}
