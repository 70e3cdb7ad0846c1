/** A schedule's (or a channel's) tags as small labels, in the order they were given. */
export function TagList({ tags, testId = "tags" }: { tags: readonly string[] | undefined; testId?: string }) {
  if (!tags?.length) return null;
  return (
    <span className="inline-flex flex-wrap gap-1" data-testid={testId}>
      {tags.map((t) => (
        <span key={t} data-testid="tag" className="rounded bg-violet-50 px-1.5 py-0.5 font-mono text-xs text-violet-800">
          {t}
        </span>
      ))}
    </span>
  );
}
