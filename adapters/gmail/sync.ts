/**
 * One round of one mailbox, from its cursor (the checkpoint `gmail:<name>/<user>:cursor`):
 * - no cursor: the mailbox's current `historyId` is noted (getProfile), then each label's
 *   messages are listed page by page (`messages.list`) and fetched; each page is handed to intake
 *   with the cursor that follows it (the label and the next page token) in one durable write, so
 *   a crash resumes at the first page not yet stored. After the last page the cursor becomes the
 *   noted `historyId`: what arrived during the listing comes through the history.
 * - a `historyId`: `history.list` from it (messages added, labels added), page by page; each
 *   page's messages in a configured label are fetched and stored with the last history record id
 *   of the page as the new cursor, and the last page with the mailbox's current `historyId`.
 * - `history.list` answering 404 (the `historyId` is too old; Google keeps about a week): the
 *   labels are listed again from the last checkpoint's date (`after:`), as in a first round. The
 *   messages read again have the same comment ids, so intake and the ledger store and bill
 *   nothing twice.
 */
import type { Logger } from '../../src/logger.js';
import type { FilterReason, MessageFilter } from '../../src/controls/filter.js';
import type { Inbound, Intake } from '../../src/pipeline/types.js';
import { GmailHttpError, type GmailClient } from './client.js';
import { fetchContents, largeIds, type Content, type MessageRef } from './content.js';

/** What the cursor checkpoint holds. */
export interface Cursor {
  /** `list`: a listing under way (first round, or again after an expired history); `history`: reading history. */
  phase: 'list' | 'history';
  /** The history id to read from (history), or to continue from once the listing is done (list). */
  historyId: string;
  /** When this cursor was written (ISO): an expired history is listed again from here. */
  at: string;
  /** list: the index of the label being listed, and its next page (none: its first). */
  label?: number;
  pageToken?: string;
  /** list: only messages received after this (epoch s), for a listing after an expired history. */
  afterS?: number;
  /** list: messages of the label listed through `pageToken` (how many it has left: its messagesTotal less these). */
  read?: number;
}

export interface LabelTarget {
  /** As configured (id or name). */
  given: string;
  id: string;
  name: string;
}

export interface RoundContext {
  client: GmailClient;
  sink: Intake;
  log: Logger;
  instance: string;
  route: string;
  labels: LabelTarget[];
  /** Every label of the mailbox, id → name (origin labels are shown by name). */
  labelNames: ReadonlyMap<string, string>;
  afterDelivery: boolean;
  pageSize: number;
  batchSize: number;
  fullOverBytes: number;
  signal: AbortSignal;
  onStored(count: number, viaFull: number): void;
  /** The mailbox's controls: `exclude_labels`, participants, skip and `since` (resolved); what they leave out is never handed to intake. */
  filter?: MessageFilter;
  since?: Date | undefined;
  /** Once per message left out, after the page beside it is durable. */
  onFiltered?(label: string, reason: FilterReason): void;
  /** Messages of a label left to read in this round, where Gmail tells (a first listing: messagesTotal; history: the page's). */
  onBehind?(label: LabelTarget, behind: number): void;
}

/** Listing again after an expired history starts this long before the last checkpoint (clock and time zone margin). */
const RELIST_MARGIN_S = 86_400;

/** history.list answered 404: the start history id is older than Gmail keeps. */
class HistoryExpired extends Error {}

export const cursorKey = (instance: string) => `gmail:${instance}:cursor`;

export async function round(ctx: RoundContext): Promise<void> {
  const key = cursorKey(ctx.instance);
  let cursor = (await ctx.sink.checkpoint(key)) as Cursor | undefined;
  if (cursor === undefined) cursor = await startListing(ctx, undefined);
  for (;;) {
    if (cursor.phase === 'list') {
      await listing(ctx, cursor);
      return;
    }
    try {
      await history(ctx, cursor);
      return;
    } catch (err) {
      if (!(err instanceof HistoryExpired)) throw err;
      const afterS = Math.floor(Date.parse(cursor.at) / 1000) - RELIST_MARGIN_S;
      ctx.log.warn(
        { code: 'MAILGATE_ERR_GMAIL_HISTORY_RESET', historyId: cursor.historyId, since: new Date(afterS * 1000).toISOString() },
        `historyId ${cursor.historyId} expired: listing the labels again since ${new Date(afterS * 1000).toISOString()} (nothing is stored or billed twice)`,
      );
      cursor = await startListing(ctx, afterS);
    }
  }
}

async function startListing(ctx: RoundContext, afterS: number | undefined): Promise<Cursor> {
  const profile = await ctx.client.call<{ historyId?: string }>('getProfile', '/profile', { signal: ctx.signal });
  return {
    phase: 'list',
    historyId: String(profile.historyId ?? '0'),
    at: new Date().toISOString(),
    label: 0,
    ...(afterS === undefined ? {} : { afterS }),
  };
}

async function listing(ctx: RoundContext, start: Cursor): Promise<void> {
  const key = cursorKey(ctx.instance);
  let cursor = start;
  // A first listing: each label's messagesTotal (labels.get) less what was listed of it. A listing
  // after an expired history reads only the recent mail, which no figure of Gmail counts.
  const totals = start.afterS === undefined ? await labelTotals(ctx, start.label ?? 0) : new Map<string, number>();
  for (const [li, label] of ctx.labels.entries()) {
    const total = totals.get(label.id);
    if (li >= (start.label ?? 0) && total !== undefined) ctx.onBehind?.(label, total - (li === start.label ? (start.read ?? 0) : 0));
  }
  for (let li = start.label ?? 0; li < ctx.labels.length; li++) {
    const label = ctx.labels[li]!;
    const large = await largeIds(ctx.client, label.id, ctx.fullOverBytes, cursor.afterS, ctx.signal);
    let pageToken = li === start.label ? cursor.pageToken : undefined;
    let read = li === start.label ? (cursor.read ?? 0) : 0;
    for (;;) {
      const q = cursor.afterS === undefined ? undefined : `after:${cursor.afterS}`;
      const page = await ctx.client.call<{ messages?: MessageRef[]; nextPageToken?: string }>('messages.list', '/messages', {
        query: { labelIds: label.id, maxResults: ctx.pageSize, pageToken, q },
        signal: ctx.signal,
      });
      read += page.messages?.length ?? 0;
      const last = page.nextPageToken === undefined && li === ctx.labels.length - 1;
      const next: Cursor = last
        ? { phase: 'history', historyId: cursor.historyId, at: new Date().toISOString() }
        : page.nextPageToken === undefined
          ? { ...cursor, label: li + 1, pageToken: undefined, read: undefined }
          : { ...cursor, label: li, pageToken: page.nextPageToken, read };
      await store(ctx, key, page.messages ?? [], large, next);
      const total = totals.get(label.id);
      if (total !== undefined) ctx.onBehind?.(label, page.nextPageToken === undefined ? 0 : Math.max(0, total - read));
      cursor = next;
      pageToken = page.nextPageToken;
      if (pageToken === undefined) break;
    }
  }
  if (cursor.phase === 'list')
    await store(ctx, key, [], new Set(), { phase: 'history', historyId: cursor.historyId, at: new Date().toISOString() });
}

/** The messagesTotal of the labels from index `from` on (labels.get), when anyone asks for the figure. */
async function labelTotals(ctx: RoundContext, from: number): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  if (ctx.onBehind === undefined) return totals;
  for (const label of ctx.labels.slice(from)) {
    const res = await ctx.client.call<{ messagesTotal?: number }>('labels.get', `/labels/${encodeURIComponent(label.id)}`, {
      signal: ctx.signal,
    });
    if (typeof res.messagesTotal === 'number') totals.set(label.id, res.messagesTotal);
  }
  return totals;
}

interface HistoryPage {
  history?: Array<{
    id: string;
    messagesAdded?: Array<{ message: { id: string; threadId?: string; labelIds?: string[] } }>;
    labelsAdded?: Array<{ message: { id: string; threadId?: string; labelIds?: string[] }; labelIds?: string[] }>;
  }>;
  nextPageToken?: string;
  historyId?: string;
}

async function history(ctx: RoundContext, start: Cursor): Promise<void> {
  const key = cursorKey(ctx.instance);
  const wanted = new Set(ctx.labels.map((l) => l.id));
  let pageToken: string | undefined;
  for (;;) {
    let page: HistoryPage;
    try {
      page = await ctx.client.call<HistoryPage>('history.list', '/history', {
        query: {
          startHistoryId: start.historyId,
          historyTypes: ['messageAdded', 'labelAdded'],
          labelId: ctx.labels.length === 1 ? ctx.labels[0]!.id : undefined,
          maxResults: 500,
          pageToken,
        },
        signal: ctx.signal,
      });
    } catch (err) {
      if (err instanceof GmailHttpError && err.httpStatus === 404) throw new HistoryExpired(err.message);
      throw err;
    }
    const refs = new Map<string, MessageRef & { labelIds?: string[] }>();
    for (const h of page.history ?? []) {
      for (const a of h.messagesAdded ?? []) if ((a.message.labelIds ?? []).some((l) => wanted.has(l))) refs.set(a.message.id, a.message);
      for (const a of h.labelsAdded ?? []) if ((a.labelIds ?? []).some((l) => wanted.has(l))) refs.set(a.message.id, a.message);
    }
    const records = page.history ?? [];
    const lastRecord = records.length > 0 ? records[records.length - 1]!.id : start.historyId;
    const done = page.nextPageToken === undefined;
    const next: Cursor = {
      phase: 'history',
      historyId: done ? String(page.historyId ?? lastRecord) : lastRecord,
      at: new Date().toISOString(),
    };
    const large = new Set<string>();
    if (refs.size > 0) {
      const afterS = Math.floor(Date.parse(start.at) / 1000) - RELIST_MARGIN_S;
      for (const l of ctx.labels) for (const id of await largeIds(ctx.client, l.id, ctx.fullOverBytes, afterS, ctx.signal)) large.add(id);
    }
    behindOf(ctx, refs.values());
    // Nothing new and the cursor unchanged: no write.
    if (refs.size > 0 || next.historyId !== start.historyId) await store(ctx, key, [...refs.values()], large, next);
    if (refs.size > 0) behindOf(ctx, []);
    if (done) return;
    pageToken = page.nextPageToken;
  }
}

/** History: each label's messages on the page being read (history pages ahead are not counted until read). */
function behindOf(ctx: RoundContext, refs: Iterable<MessageRef & { labelIds?: string[] }>): void {
  if (ctx.onBehind === undefined) return;
  const list = [...refs];
  for (const label of ctx.labels) ctx.onBehind(label, list.filter((r) => (r.labelIds ?? []).includes(label.id)).length);
}

async function store(ctx: RoundContext, key: string, refs: MessageRef[], large: ReadonlySet<string>, next: Cursor): Promise<void> {
  const contents = await fetchContents(ctx.client, refs, large, { batchSize: ctx.batchSize, signal: ctx.signal });
  const filtered: Array<{ label: string; reason: FilterReason }> = [];
  const kept = contents.filter((c) => {
    const out = leftOut(ctx, c);
    if (out !== undefined) filtered.push(out);
    return out === undefined;
  });
  const batch = kept.map((c) => inbound(ctx, c));
  const value = Object.fromEntries(Object.entries(next).filter(([, v]) => v !== undefined));
  await ctx.sink.accept(batch, { checkpoint: { key, value } });
  ctx.onStored(batch.length, kept.filter((c) => c.viaFull).length);
  for (const f of filtered) ctx.onFiltered?.(f.label, f.reason);
}

/** Why the mailbox's controls leave a message out (with the label it is counted under); undefined: kept. */
function leftOut(ctx: RoundContext, c: Content): { label: string; reason: FilterReason } | undefined {
  const names = c.labelIds.map((l) => ctx.labelNames.get(l) ?? l);
  const label = ctx.labels.find((l) => c.labelIds.includes(l.id))?.name ?? names[0] ?? '';
  if (ctx.filter !== undefined) {
    const excluded = names.find((n) => !ctx.filter!.folder(n));
    if (excluded !== undefined) return { label: excluded, reason: 'excluded_label' };
  }
  if (ctx.since !== undefined && c.internalDate !== undefined && Number(c.internalDate) < ctx.since.getTime())
    return { label, reason: 'since' };
  const verdict = ctx.filter?.judge(c.raw);
  return verdict === undefined || verdict.keep ? undefined : { label, reason: verdict.reason };
}

/** The Message-ID of a header block, angle brackets kept (origin details; the parser reads the real one). */
function messageId(raw: Buffer): string | undefined {
  const end = raw.indexOf('\r\n\r\n');
  const head = raw.subarray(0, end < 0 ? Math.min(raw.length, 65_536) : end).toString('latin1');
  return /^message-id:[ \t]*(<[^>\r\n]*>)/im.exec(head)?.[1];
}

/** The identity of a Gmail message: the instance and the message's id in the mailbox (`gmail:<instance>:<id>:0`). */
export function gmailKey(instance: string, id: string): string {
  return `gmail:${instance}:${id}:0`;
}

function inbound(ctx: RoundContext, c: Content): Inbound {
  const names = ctx.labelNames;
  const mid = messageId(c.raw);
  return {
    raw: c.raw,
    key: gmailKey(ctx.instance, c.id),
    route: ctx.route,
    receivedAt: c.internalDate === undefined ? new Date() : new Date(c.internalDate),
    origin: {
      adapter: 'gmail',
      instance: ctx.instance,
      id: c.id,
      details: {
        mailbox: ctx.client.user,
        labels: c.labelIds.map((l) => names.get(l) ?? l),
        eventId: c.id,
        ...(c.threadId === undefined ? {} : { threadId: c.threadId }),
        ...(mid ? { internetMessageId: mid } : {}),
      },
    },
    ...(ctx.afterDelivery ? { afterDelivery: true } : {}),
  };
}
