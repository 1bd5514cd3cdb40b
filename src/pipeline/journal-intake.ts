/**
 * Intake's journal step, for routes with `unwrap: exchange_journal` (src/pipeline/journal.ts):
 * each report is replaced by the original it carries, its envelope becomes the origin's. Several
 * reports of one message (Exchange writes one per recipient group or server) are one comment:
 * each later report's envelope is the union of the earlier ones (stored on the route, found by
 * comment id, and those earlier in the same batch) and its own — a later report adds, never
 * removes. The union needs the original's Message-ID; without one, each report keeps its own.
 */
import type { Warning } from '../errors.js';
import { commentIdFrom, messageIdOf } from '../document/comment-id.js';
import { splitHeader } from '../mime/header-split.js';
import type { Store } from '../store/types.js';
import type { RouteConfig } from '../config/schema.js';
import type { JournalEnvelope } from './journal.js';
import type { Inbound } from './types.js';

export interface Unwrapping {
  msg: Inbound;
  route: RouteConfig;
  /** Warnings for the item (a malformed report). */
  warnings?: Warning[];
}

function commentIdOf(raw: Buffer): string | undefined {
  const id = messageIdOf(splitHeader(raw, 0, raw.length).fields);
  return id === undefined ? undefined : commentIdFrom(id, '', '').id;
}

/** The journal envelope of the newest item the route holds for this comment, if any. */
async function stored(store: Store, route: string, commentId: string): Promise<JournalEnvelope | undefined> {
  const id = (await store.itemsByComment(route, [commentId])).get(commentId);
  if (id === undefined) return undefined;
  return (await store.getItem(id))?.origin.envelope?.journal;
}

/** Applies the journal step to the messages of routes that ask for it, in batch order; others pass as they are. */
export async function unwrapJournals<T extends Unwrapping>(items: T[], store: Store): Promise<T[]> {
  // The journal reader (TNEF and Outlook message libraries) is loaded the first time a route
  // that asks for it has a message: other processes never pay for it.
  if (!items.some((item) => item.route.unwrap === 'exchange_journal' && item.msg.failure === undefined)) return items;
  const { journalEnvelope, mergeJournal, unwrapJournalReport } = await import('./journal.js');
  const seen = new Map<string, JournalEnvelope>();
  const out: T[] = [];
  for (const item of items) {
    if (item.route.unwrap !== 'exchange_journal' || item.msg.failure !== undefined) {
      out.push(item);
      continue;
    }
    const result = unwrapJournalReport(item.msg.raw);
    if (result.kind === 'plain') {
      out.push(item);
      continue;
    }
    if (result.kind === 'malformed') {
      out.push({ ...item, warnings: [...(item.warnings ?? []), result.warning] });
      continue;
    }
    let journal = result.journal;
    const commentId = commentIdOf(result.raw);
    if (commentId !== undefined) {
      const at = `${item.route.name}\0${commentId}`;
      const earlier = seen.get(at) ?? (await stored(store, item.route.name, commentId));
      journal = mergeJournal(earlier, journal);
      seen.set(at, journal);
    }
    const origin = { ...item.msg.origin, envelope: journalEnvelope(item.msg.origin.envelope, result.sender, journal) };
    out.push({ ...item, msg: { ...item.msg, raw: result.raw, origin } });
  }
  return out;
}
