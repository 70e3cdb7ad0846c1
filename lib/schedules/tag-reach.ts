import { sql, type SQL } from "drizzle-orm";

/**
 * The schedule `s` carries at least one of `tags`: what a tag-restricted token reaches (and the
 * Schedules list's any-of-these-tags filter). schedules_tags_idx (GIN) serves it.
 */
export const carriesAnyTag = (tags: readonly string[]): SQL => sql`s.tags && ${sql.param(tags)}::text[]`;
