/** A segmented control for the charts' window (1 h, 24 h, 7 d). */
export function WindowPicker<T extends string>({ value, options, onChange }: { value: T; options: T[]; onChange: (v: T) => void }) {
  return (
    <div role="radiogroup" aria-label="Chart window" className="inline-flex rounded-md border border-slate-300 bg-white p-0.5">
      {options.map((o) => (
        <button
          key={o}
          type="button"
          role="radio"
          aria-checked={o === value}
          data-testid={`window-${o}`}
          onClick={() => onChange(o)}
          className={`rounded px-2.5 py-1 text-xs font-medium ${o === value ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-100"}`}
        >
          {o}
        </button>
      ))}
    </div>
  );
}
