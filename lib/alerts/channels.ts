/**
 * Notification channels: a webhook (JSON body), a Slack-compatible webhook (`{ text }` body) or
 * e-mail through the SMTP server in SLOTKEEPER_SMTP_URL. Each mutation is one transaction with its
 * audit record.
 */
import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import { recordAudit, type Actor } from "../audit/record";
import type { Db } from "../db/client";
import { alertChannels, type AlertChannel } from "../db/schema";
import { isUniqueViolation } from "../db/sql-errors";
import { AppError } from "../errors";
import { MAX_TAGS, TAG_PATTERN } from "../schedules/input";

export const CHANNEL_KINDS = ["webhook", "slack", "email"] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

const httpUrl = z
  .string()
  .trim()
  .url("must be a URL")
  .refine((u) => /^https?:\/\//i.test(u), "must be an http:// or https:// URL");
const name = z.string().trim().min(1, "required").max(100, "at most 100 characters");
const enabled = z.boolean().default(true);
const tags = z.array(z.string().regex(TAG_PATTERN, "a tag is 1 to 64 letters, digits and . _ : -")).max(MAX_TAGS, `at most ${MAX_TAGS} tags`).default([]);

/** A channel as the API accepts it (create, and the whole body of an edit). */
export const channelInput = z.discriminatedUnion("kind", [
  z.object({ name, enabled, tags, kind: z.literal("webhook"), config: z.object({ url: httpUrl }) }),
  z.object({ name, enabled, tags, kind: z.literal("slack"), config: z.object({ url: httpUrl }) }),
  z.object({
    name,
    enabled,
    tags,
    kind: z.literal("email"),
    config: z.object({ to: z.array(z.string().trim().email("must be an e-mail address")).min(1, "at least one recipient").max(20) }),
  }),
]);
export type ChannelInput = z.infer<typeof channelInput>;

/** What the API returns for a channel. */
export const channelViewSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    kind: z.enum(CHANNEL_KINDS),
    /** `{ url }` for a webhook or Slack channel, `{ to: [addresses] }` for e-mail. */
    config: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    /** Empty: every schedule's alerts; otherwise only those of schedules carrying one of these tags. */
    tags: z.array(z.string()),
    createdAt: z.string(),
  })
  .strict();
export type ChannelView = z.infer<typeof channelViewSchema>;

/** Validate API input into a ChannelInput, or throw an AppError naming the field. */
export function parseChannelInput(body: unknown): ChannelInput {
  const r = channelInput.safeParse(body);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  throw new AppError("invalid", `${issue.path.join(".") || "body"}: ${issue.message}`, issue.path.join(".") || undefined);
}

/** The API shape of a stored channel. */
export function toChannelView(c: AlertChannel): ChannelView {
  return { id: c.id, name: c.name, kind: c.kind as ChannelKind, config: c.config as Record<string, unknown>, enabled: c.enabled, tags: c.tags, createdAt: c.createdAt.toISOString() };
}

/** Every channel, by name. */
export async function listChannels(db: Db): Promise<ChannelView[]> {
  const rows = await db.select().from(alertChannels).orderBy(asc(alertChannels.name));
  return rows.map(toChannelView);
}

/** One channel by id, or a not_found error. */
export async function getChannel(db: Db, id: number): Promise<ChannelView> {
  const [row] = await db.select().from(alertChannels).where(eq(alertChannels.id, id));
  if (!row) throw new AppError("not_found", `no channel with id ${id}`, "id");
  return toChannelView(row);
}

function nameTaken(err: unknown): boolean {
  return isUniqueViolation(err) || isUniqueViolation((err as { cause?: unknown })?.cause);
}

/** Create a channel; a taken name is a conflict. */
export async function createChannel(db: Db, input: ChannelInput, actor: Actor): Promise<ChannelView> {
  try {
    return await db.transaction(async (tx) => {
      const [row] = await tx.insert(alertChannels).values(input).returning();
      const view = toChannelView(row);
      await recordAudit(tx, actor, { action: "channel.create", targetType: "channel", targetId: row.id, after: view });
      return view;
    });
  } catch (err) {
    if (nameTaken(err)) throw new AppError("conflict", `a channel named "${input.name}" already exists`, "name", { cause: err });
    throw err;
  }
}

/** Replace a channel's name, kind, config and enabled flag. */
export async function updateChannel(db: Db, id: number, input: ChannelInput, actor: Actor): Promise<ChannelView> {
  try {
    return await db.transaction(async (tx) => {
      const [before] = await tx.select().from(alertChannels).where(eq(alertChannels.id, id)).for("update");
      if (!before) throw new AppError("not_found", `no channel with id ${id}`, "id");
      const [row] = await tx.update(alertChannels).set(input).where(eq(alertChannels.id, id)).returning();
      const view = toChannelView(row);
      await recordAudit(tx, actor, { action: "channel.update", targetType: "channel", targetId: id, before: toChannelView(before), after: view });
      return view;
    });
  } catch (err) {
    if (nameTaken(err)) throw new AppError("conflict", `a channel named "${input.name}" already exists`, "name", { cause: err });
    throw err;
  }
}

/** Delete a channel; its queued deliveries go with it (foreign key cascade), the events stay. */
export async function deleteChannel(db: Db, id: number, actor: Actor): Promise<void> {
  await db.transaction(async (tx) => {
    const [row] = await tx.delete(alertChannels).where(eq(alertChannels.id, id)).returning();
    if (!row) throw new AppError("not_found", `no channel with id ${id}`, "id");
    await recordAudit(tx, actor, { action: "channel.delete", targetType: "channel", targetId: id, before: toChannelView(row) });
  });
}
