/**
 * The checkpoint of one folder, stored with the outbox items it covers under
 * `imap:<account>:<folder>`: UIDVALIDITY, the last UID made durable, HIGHESTMODSEQ (CONDSTORE)
 * and, while a `since` backfill is unfinished, the last UID that backfill covers.
 */
export interface FolderCheckpoint {
  uidValidity: number;
  lastUid: number;
  /** HIGHESTMODSEQ at the time of the pass (CONDSTORE servers), as a decimal string. */
  highestModseq?: string;
  /** While lastUid is below it: the last UID of a `since` backfill (UIDs up to it are read only if SINCE matches). */
  sinceUntil?: number;
}

export function checkpointKey(account: string, folder: string): string {
  return `imap:${account}:${folder}`;
}

export function readCheckpoint(value: Record<string, unknown> | undefined): FolderCheckpoint | undefined {
  if (value === undefined) return undefined;
  const { uidValidity, lastUid, highestModseq, sinceUntil } = value;
  if (typeof uidValidity !== 'number' || typeof lastUid !== 'number') return undefined;
  return {
    uidValidity,
    lastUid,
    ...(typeof highestModseq === 'string' ? { highestModseq } : {}),
    ...(typeof sinceUntil === 'number' ? { sinceUntil } : {}),
  };
}

/** The stored form: optional fields only when they mean something (the backfill bound while unfinished). */
export function checkpointValue(c: {
  uidValidity: number;
  lastUid: number;
  highestModseq: string | undefined;
  sinceUntil: number | undefined;
}): Record<string, unknown> {
  return {
    uidValidity: c.uidValidity,
    lastUid: c.lastUid,
    ...(c.highestModseq === undefined ? {} : { highestModseq: c.highestModseq }),
    ...(c.sinceUntil !== undefined && c.lastUid < c.sinceUntil ? { sinceUntil: c.sinceUntil } : {}),
  };
}
