import type { RunDetail } from "@/lib/client/runs";

type Output = NonNullable<RunDetail["attemptsList"][number]["output"]>;
type Line = Output["log"][number];

const LEVEL_STYLE: Record<string, string> = { fatal: "text-red-700", error: "text-red-700", warn: "text-amber-700", info: "text-slate-700", debug: "text-slate-500", trace: "text-slate-500" };

function Block({ title, testId, tone = "slate", children }: { title: string; testId: string; tone?: "slate" | "red"; children: React.ReactNode }) {
  return (
    <div className="mt-2">
      <div className="text-xs font-medium uppercase tracking-wide text-slate-500">{title}</div>
      <pre data-testid={testId} className={`mt-1 max-h-64 overflow-auto whitespace-pre-wrap break-words rounded p-2 font-mono text-xs ${tone === "red" ? "bg-red-50 text-red-900" : "bg-slate-50 text-slate-800"}`}>
        {children}
      </pre>
    </div>
  );
}

function LogLineView({ line }: { line: Line }) {
  const { time, level, msg, ...fields } = line;
  const rest = Object.keys(fields).length > 0 ? JSON.stringify(fields) : "";
  return (
    <div data-testid="attempt-log-line" data-level={level}>
      <span className="text-slate-500">{time.slice(11, 23)}</span> <span className={`font-semibold ${LEVEL_STYLE[level] ?? ""}`}>{level}</span>
      {msg ? <span> {msg}</span> : null}
      {rest ? <span className="text-slate-500"> {rest}</span> : null}
    </div>
  );
}

/**
 * What one attempt left for an operator: its handler's result, its ctx.log lines, and for programs
 * the last part of stdout and stderr (secrets masked by the worker, which also bounds each).
 */
export function AttemptOutput({ output }: { output: Output }) {
  return (
    <div data-testid="attempt-output">
      {output.result !== null ? <Block title="Result" testId="attempt-result">{JSON.stringify(output.result, null, 2)}</Block> : null}
      {output.log.length > 0 ? (
        <Block title={`Log (${output.log.length} line${output.log.length === 1 ? "" : "s"})`} testId="attempt-log">
          {output.log.map((l, i) => (
            <LogLineView key={i} line={l} />
          ))}
        </Block>
      ) : null}
      {output.stdout !== null ? <Block title="stdout (last part)" testId="attempt-stdout">{output.stdout}</Block> : null}
      {output.stderr !== null ? <Block title="stderr (last part)" testId="attempt-stderr" tone="red">{output.stderr}</Block> : null}
    </div>
  );
}
