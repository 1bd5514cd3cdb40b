/**
 * One delta round of one folder: from the folder's checkpoint (the next link of a round under
 * way, or the delta link of the last finished one; none: a full round), page by page. Each page's
 * messages are fetched and handed to intake together with the link that follows them, in one
 * durable write: a crash resumes at the first page not yet stored. An expired link (410, or the
 * `syncStateNotFound`/`resyncRequired` errors) starts a full round; the messages read again have
 * their old keys and comment ids, so intake stores nothing twice and the ledger sends nothing
 * twice. Removed messages (`@removed`) are ignored: nothing is deleted at the service.
 */
import type { FilterReason, MessageFilter } from '../../src/controls/filter.js';
import type { Logger } from '../../src/logger.js';
import type { Inbound, Intake } from '../../src/pipeline/types.js';
import { GraphHttpError, type MailboxClient } from './client.js';
import { DELTA_SELECT, fetchContents, type Content, type DeltaItem } from './content.js';

export interface FolderCheckpoint {
  /** The link to read next: a next link (round under way) or a delta link (round finished). */
  link: string;
  /** The folder id the link belongs to. */
  folderId: string;
  /** A full round under way: messages of the folder read through `link` (how many it has left: its totalItemCount less these). */
  read?: number;
}

export interface FolderTarget {
  /** As configured (`inbox`, `inbox/Support`): the origin's folder and the checkpoint key. */
  path: string;
  id: string;
  key: string;
}

export interface RoundContext {
  client: MailboxClient;
  sink: Intake;
  log: Logger;
  /** The adapter instance (`<name>/<user>`). */
  instance: string;
  route: string;
  afterDelivery: boolean;
  pageSize: number;
  slots: number;
  signal: AbortSignal;
  onStored(count: number, viaJson: number): void;
  /** The mailbox's filter and `since` (resolved): messages they leave out are never handed to intake. */
  filter?: MessageFilter;
  since?: Date | undefined;
  /** Once per message left out, after the page beside it is durable. */
  onFiltered?(folder: string, reason: FilterReason): void;
  /**
   * Messages of the folder left to read in this round: in a full round its totalItemCount less
   * those read, in a delta round the page's (Graph does not tell how many pages follow).
   */
  onBehind?(behind: number): void;
}

const EXPIRED = new Set(['syncstatenotfound', 'resyncrequired', 'syncstateinvalid']);

export function isExpiredDelta(err: unknown): boolean {
  return err instanceof GraphHttpError && (err.httpStatus === 410 || EXPIRED.has((err.graphCode ?? '').toLowerCase()));
}

/** Reads the folder up to its current delta link; resolves with the messages stored. */
export async function deltaRound(ctx: RoundContext, folder: FolderTarget): Promise<number> {
  // Only arrivals: changes to a message already read (its flags, its categories — often made by
  // the after-delivery actions) would otherwise bring it back in every round.
  const initial = `/mailFolders/${encodeURIComponent(folder.id)}/messages/delta?$select=${DELTA_SELECT}&changeType=created`;
  const saved = (await ctx.sink.checkpoint(folder.key)) as FolderCheckpoint | undefined;
  let link = saved !== undefined && saved.folderId === folder.id ? saved.link : initial;
  let reset = false;
  let stored = 0;
  // A full round (from the start, or resumed): the folder's count, less what was read of it.
  let full = link === initial ? { total: await folderTotal(ctx, folder), read: 0 } : undefined;
  if (full === undefined && saved?.read !== undefined) full = { total: await folderTotal(ctx, folder), read: saved.read };
  if (full?.total !== undefined) ctx.onBehind?.(Math.max(0, full.total - full.read));
  // The previous page's write: the next page is fetched while it is made durable (intake stores
  // in call order, and a write queued behind a failed one fails too, its checkpoint unwritten).
  let writing: Promise<void> = Promise.resolve();
  try {
    return await pages();
  } finally {
    await writing.catch(() => undefined);
  }

  async function pages(): Promise<number> {
    for (;;) {
      let page: { value?: DeltaItem[]; '@odata.nextLink'?: string; '@odata.deltaLink'?: string };
      try {
        const res = await ctx.client.request(link, { prefer: [`odata.maxpagesize=${ctx.pageSize}`], signal: ctx.signal });
        page = JSON.parse(res.body.toString('utf8')) as typeof page;
      } catch (err) {
        if (!isExpiredDelta(err) || reset) throw err;
        await writing;
        reset = true;
        ctx.log.warn(
          { code: 'MAILGATE_ERR_GRAPH_SYNC_RESET', folder: folder.path, reason: (err as Error).message },
          `delta link of "${folder.path}" expired: reading the folder again in full (nothing is stored or billed twice)`,
        );
        link = initial;
        full = { total: await folderTotal(ctx, folder), read: 0 };
        continue;
      }
      const next = page['@odata.nextLink'] ?? page['@odata.deltaLink'];
      if (next === undefined)
        throw new GraphHttpError('MAILGATE_ERR_GRAPH_RESPONSE', 'a delta page has neither a next link nor a delta link', 200, undefined);
      const items = (page.value ?? []).filter((v) => v['@removed'] === undefined && typeof v.id === 'string');
      if (full === undefined) ctx.onBehind?.(items.length);
      else full.read += items.length;
      const read = full?.read;
      const left = full?.total === undefined ? undefined : page['@odata.deltaLink'] !== undefined ? 0 : Math.max(0, full.total - full.read);
      const contents = await fetchContents(ctx.client, items, ctx.slots, ctx.signal);
      const filtered: FilterReason[] = [];
      const kept = contents.filter((c) => {
        const reason = leftOut(ctx, c);
        if (reason !== undefined) filtered.push(reason);
        return reason === undefined;
      });
      const batch = kept.map((c) => inbound(ctx, folder, c));
      const checkpoint: FolderCheckpoint = {
        link: next,
        folderId: folder.id,
        ...(read !== undefined && page['@odata.deltaLink'] === undefined ? { read } : {}),
      };
      const viaJson = contents.filter((c) => c.viaJson).length;
      await writing;
      writing = ctx.sink.accept(batch, { checkpoint: { key: folder.key, value: { ...checkpoint } } }).then(() => {
        stored += batch.length;
        ctx.onStored(batch.length, viaJson);
        for (const reason of filtered) ctx.onFiltered?.(folder.path, reason);
        if (left !== undefined) ctx.onBehind?.(left);
      });
      // Observed here so that a failure waits for the next `await writing` rather than going unhandled.
      writing.catch(() => undefined);
      link = next;
      if (page['@odata.deltaLink'] !== undefined) {
        await writing;
        return stored;
      }
    }
  }
}

/** The folder's totalItemCount, when anyone asks for the figure. */
async function folderTotal(ctx: RoundContext, folder: FolderTarget): Promise<number | undefined> {
  if (ctx.onBehind === undefined) return undefined;
  const res = await ctx.client.request(`/mailFolders/${encodeURIComponent(folder.id)}?$select=totalItemCount`, { signal: ctx.signal });
  const count = (JSON.parse(res.body.toString('utf8')) as { totalItemCount?: unknown }).totalItemCount;
  return typeof count === 'number' ? count : undefined;
}

/** Why the mailbox's controls leave a message out (received before `since`, or the filter's verdict); undefined: kept. */
function leftOut(ctx: RoundContext, c: Content): FilterReason | undefined {
  const received = c.item.receivedDateTime === undefined ? Number.NaN : Date.parse(c.item.receivedDateTime);
  if (ctx.since !== undefined && !Number.isNaN(received) && received < ctx.since.getTime()) return 'since';
  const verdict = ctx.filter?.judge(c.raw);
  return verdict === undefined || verdict.keep ? undefined : verdict.reason;
}

/**
 * The identity of a Graph message: the instance and the message's immutable id in the mailbox
 * (`graph:<instance>:<id>:0`, the form stores written before use: their keys stay valid).
 */
export function graphKey(instance: string, id: string): string {
  return `graph:${instance}:${id}:0`;
}

function inbound(ctx: RoundContext, folder: FolderTarget, c: Content): Inbound {
  const received = c.item.receivedDateTime === undefined ? Number.NaN : Date.parse(c.item.receivedDateTime);
  return {
    raw: c.raw,
    key: graphKey(ctx.instance, c.item.id),
    route: ctx.route,
    receivedAt: Number.isNaN(received) ? new Date() : new Date(received),
    origin: {
      adapter: 'graph',
      instance: ctx.instance,
      id: c.item.id,
      details: {
        mailbox: ctx.client.user,
        folder: folder.path,
        eventId: c.item.id,
        ...(c.item.internetMessageId ? { internetMessageId: c.item.internetMessageId } : {}),
      },
    },
    ...(ctx.afterDelivery ? { afterDelivery: true } : {}),
  };
}
