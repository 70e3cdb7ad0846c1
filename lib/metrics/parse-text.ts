/**
 * A strict reader of the Prometheus text exposition format (0.0.4), used by the tests to prove
 * that /api/metrics parses: every sample belongs to a family declared by # HELP and # TYPE, names
 * and labels are well formed, values are numbers, and histograms are cumulative and end in +Inf.
 */

export type Sample = { name: string; labels: Record<string, string>; value: number };
export type Family = { name: string; help: string; type: string; samples: Sample[] };

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

function parseValue(v: string, line: string): number {
  if (v === "+Inf") return Infinity;
  if (v === "-Inf") return -Infinity;
  if (v === "NaN") return NaN;
  const n = Number(v);
  if (v.trim() === "" || Number.isNaN(n)) throw new Error(`bad value in: ${line}`);
  return n;
}

function parseLabels(text: string, line: string): Record<string, string> {
  const out: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const m = LABEL.exec(text);
    if (!m) throw new Error(`bad labels in: ${line}`);
    out[m[1]] = m[2].replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return out;
}

/** The family a sample name belongs to (histogram series carry _bucket/_sum/_count suffixes). */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  if (families.has(name)) return families.get(name);
  const base = name.replace(/_(bucket|sum|count)$/, "");
  const f = families.get(base);
  return f && (f.type === "histogram" || f.type === "summary") ? f : undefined;
}

/** Parse exposition text into families; throws on the first malformed line. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("# HELP ") || line.startsWith("# TYPE ")) {
      const [, kind, name, ...rest] = line.split(" ");
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      const f = families.get(name) ?? { name, help: "", type: "untyped", samples: [] };
      if (kind === "HELP") f.help = rest.join(" ");
      else {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest[0])) throw new Error(`bad type in: ${line}`);
        f.type = rest[0];
      }
      families.set(name, f);
      continue;
    }
    if (line.startsWith("#")) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const family = familyOf(m[1], families);
    if (!family) throw new Error(`sample before its # TYPE: ${line}`);
    family.samples.push({ name: m[1], labels: m[3] ? parseLabels(m[3], line) : {}, value: parseValue(m[4], line) });
  }
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: Family) {
  const buckets = f.samples.filter((s) => s.name === `${f.name}_bucket`);
  let last = -Infinity;
  let lastCount = 0;
  for (const b of buckets) {
    const le = b.labels.le === "+Inf" ? Infinity : Number(b.labels.le);
    if (!(le > last) || b.value < lastCount) throw new Error(`${f.name}: buckets are not cumulative in increasing le`);
    last = le;
    lastCount = b.value;
  }
  const count = f.samples.find((s) => s.name === `${f.name}_count`);
  if (last !== Infinity || !count || count.value !== lastCount) throw new Error(`${f.name}: the +Inf bucket must equal _count`);
}

/** The value of one sample by name and labels (undefined when absent). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const f = familyOf(name, families);
  const s = f?.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}
