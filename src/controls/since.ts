/**
 * `since`: an ISO date or date-time is itself; an ISO 8601 duration counts back from the
 * mailbox's first sync, which is remembered (a checkpoint) so the window never slides.
 */
import { ISO_DURATION_RE } from './schema.js';

const UNIT_MS = { W: 7 * 86_400_000, D: 86_400_000, H: 3_600_000, M: 60_000, S: 1_000 } as const;

/** The start time `since` names, given when the mailbox was first synced. */
export function sinceDate(since: string, firstSync: Date): Date {
  const m = ISO_DURATION_RE.exec(since);
  if (m === null) return new Date(since);
  const [, years, months, weeks, days, , hours, minutes, seconds] = m;
  const n = (s: string | undefined) => (s === undefined ? 0 : Number.parseInt(s, 10));
  const d = new Date(firstSync.getTime());
  d.setUTCFullYear(d.getUTCFullYear() - n(years), d.getUTCMonth() - n(months));
  const ms = n(weeks) * UNIT_MS.W + n(days) * UNIT_MS.D + n(hours) * UNIT_MS.H + n(minutes) * UNIT_MS.M + n(seconds) * UNIT_MS.S;
  return new Date(d.getTime() - ms);
}

/** True when `since` is a duration (it needs the first sync time). */
export function isDuration(since: string): boolean {
  return ISO_DURATION_RE.test(since);
}

/** The checkpoint key under which a mailbox's first sync time is kept. */
export function firstSyncKey(mailbox: string): string {
  return `first-sync:${mailbox}`;
}

/**
 * The mailbox's first sync time: read from its checkpoint, or now (written) on the first call.
 * Uses the adapter's sink, so the write is fenced by the mailbox's lease like its other checkpoints.
 */
export async function firstSync(
  sink: {
    checkpoint(key: string): Promise<unknown>;
    accept(batch: never[], options: { checkpoint: { key: string; value: Record<string, unknown> } }): Promise<unknown>;
  },
  mailbox: string,
  now: () => Date = () => new Date(),
): Promise<Date> {
  const key = firstSyncKey(mailbox);
  const stored = (await sink.checkpoint(key)) as { at?: unknown } | undefined;
  if (stored !== undefined && typeof stored.at === 'string' && !Number.isNaN(Date.parse(stored.at))) return new Date(stored.at);
  const at = now();
  await sink.accept([], { checkpoint: { key, value: { at: at.toISOString() } } });
  return at;
}

/** The date `since` names for a mailbox (reading or writing its first sync time when it is a duration). */
export async function resolveSince(
  since: string | undefined,
  sink: Parameters<typeof firstSync>[0],
  mailbox: string,
): Promise<Date | undefined> {
  if (since === undefined) return undefined;
  return sinceDate(since, isDuration(since) ? await firstSync(sink, mailbox) : new Date(0));
}
