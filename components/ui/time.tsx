"use client";

/** An instant in the viewer's zone, with the UTC instant on hover; `compact` drops the year (for tables). */
export function Time({ value, fallback = "—", compact = false }: { value: string | Date | null | undefined; fallback?: string; compact?: boolean }) {
  if (!value) return <span className="text-slate-500">{fallback}</span>;
  const d = typeof value === "string" ? new Date(value) : value;
  return (
    <time dateTime={d.toISOString()} title={`${d.toISOString().replace("T", " ").replace(".000Z", "Z")} UTC`} className="whitespace-nowrap tabular-nums">
      {d.toLocaleString(undefined, { year: compact ? undefined : "numeric", month: "short", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" })}
    </time>
  );
}

export { formatDuration } from "@/lib/format/duration";
