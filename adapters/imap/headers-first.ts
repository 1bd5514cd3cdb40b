/**
 * The account's filter judged before any body crosses the wire: for a chunk of UIDs, one FETCH
 * of the header fields the filter reads (`BODY.PEEK[HEADER.FIELDS (From To Cc …)]`), a verdict
 * on each, and only the kept messages go on to be fetched (fetcher.ts). A message filtered out
 * costs its few header lines instead of its whole source.
 */
import type { ImapFlow } from 'imapflow';
import { FILTER_HEADER_FIELDS, type FilterReason, type FilterVerdict } from '../../src/controls/filter.js';
import { assertSelected, ensureGone, uidSet } from './uids.js';

/** The verdict on one message from its header block (MessageFilter.judge). */
export type Judge = (header: Buffer) => FilterVerdict;

export interface Judged {
  /** UIDs to fetch, ascending. */
  kept: number[];
  /** UIDs left out, ascending, with the reason. */
  filtered: Array<{ uid: number; reason: FilterReason }>;
}

/**
 * Judges `uids` (ascending) of the selected folder from their header fields. A UID the server
 * did not answer for must be gone (expunged meanwhile): it is neither kept nor filtered.
 */
export async function judgeHeadersFirst(client: ImapFlow, folder: string, uids: number[], judge: Judge): Promise<Judged> {
  if (uids.length === 0) return { kept: [], filtered: [] };
  assertSelected(client, folder);
  const got = await client.fetchAll(uidSet(uids), { uid: true, headers: [...FILTER_HEADER_FIELDS] }, { uid: true });
  assertSelected(client, folder);
  const answered = new Set<number>();
  const kept: number[] = [];
  const filtered: Judged['filtered'] = [];
  for (const m of [...got].sort((a, b) => a.uid - b.uid)) {
    if (answered.has(m.uid)) continue; // a throttled FETCH sent again answers twice
    answered.add(m.uid);
    const verdict = judge(m.headers ?? Buffer.alloc(0));
    if (verdict.keep) kept.push(m.uid);
    else filtered.push({ uid: m.uid, reason: verdict.reason });
  }
  await ensureGone(
    client,
    folder,
    uids.filter((u) => !answered.has(u)),
  );
  return { kept, filtered };
}
