/**
 * One pass over one folder: compare the checkpoint with the folder's UIDVALIDITY, list the
 * UIDs above the last one delivered, fetch them in bounded chunks, hand each chunk to the sink
 * and move the checkpoint only once the sink has made it durable.
 */
import type { ImapFlow } from 'imapflow';
import type { FilterReason, MessageFilter } from '../../src/controls/filter.js';
import { GatewayError } from '../../src/errors.js';
import type { Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';
import { imapKey, imapOrigin } from './identity.js';
import { parseAfterDelivery, type ImapAccountConfig } from './config.js';
import { checkpointKey, checkpointValue, readCheckpoint } from './checkpoint.js';
import { fetchChunk, type ChunkSlice, type FetchedMessage } from './fetcher.js';
import { assertSelected } from './uids.js';
import { InFlight, tailPieces } from './in-flight.js';
import { withDeadline } from './retry.js';

export interface FolderResult {
  uidValidity: number;
  lastUid: number;
  delivered: number;
  /** True when the stored checkpoint named another UIDVALIDITY: the folder was read again. */
  reset: boolean;
}

export interface SyncContext {
  config: ImapAccountConfig;
  sink: Intake;
  signal: AbortSignal;
  /** Runs one step alone on the connection (after-delivery actions run between steps). */
  exclusive?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Called after each durable chunk (health, metrics). */
  onChunk?: (folder: string, count: number, stubbed: number) => void;
  /** Called when the stored checkpoint names another UIDVALIDITY: the folder is read again. */
  onReset?: (previous: number, now: number) => void;
  /** The start time `since` names for this account (resolved once from its first sync). */
  since?: Date | undefined;
  /** The account's message filter (participants, skip): messages it leaves out are never handed to the sink. */
  filter?: MessageFilter;
  /** Called once per message the filter left out, after the chunk that held it is durable. */
  onFiltered?: (folder: string, reason: FilterReason) => void;
  /** Called once a pass knows how many messages it has to read. */
  onPassStart?: (folder: string, toRead: number) => void;
}

function notFound(err: unknown, folder: string): GatewayError | undefined {
  const e = err as { serverResponseCode?: unknown; responseText?: unknown; code?: unknown; mailboxMissing?: unknown };
  if (
    e?.mailboxMissing === true ||
    e?.serverResponseCode === 'NONEXISTENT' ||
    e?.code === 'NotFound' ||
    /doesn.t exist|not exist|unknown mailbox/i.test(String(e?.responseText ?? ''))
  ) {
    return new GatewayError('MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND', `folder "${folder}" does not exist`, { cause: err });
  }
  return undefined;
}

/** The sink owns durability; a failure there leaves the checkpoint where it was. */
async function accept(sink: Intake, batch: Inbound[], checkpoint: Checkpoint): Promise<void> {
  try {
    await sink.accept(batch, { checkpoint });
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', `intake did not accept the batch: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }
}

/** Selects `folder` read-only under imapflow's lock; `fresh` examines it again even when selected. */
async function select(client: ImapFlow, folder: string, ms: number, fresh: boolean): Promise<{ release(): void }> {
  const deadline = <T>(p: Promise<T>): Promise<T> => withDeadline(p, ms, `EXAMINE ${folder}`, () => client.close());
  const wasOpen = client.mailbox !== false && client.mailbox.path === folder;
  let lock;
  try {
    lock = await deadline(client.getMailboxLock(folder, { readOnly: true }));
    if (fresh && wasOpen) await deadline(client.mailboxOpen(folder, { readOnly: true }));
    assertSelected(client, folder);
    return lock;
  } catch (err) {
    lock?.release();
    throw notFound(err, folder) ?? err;
  }
}

interface PassStart {
  uidValidity: number;
  uidNextAtStart: number;
  modseq: string | undefined;
  /** HIGHESTMODSEQ the stored checkpoint names (undefined: none, or another UIDVALIDITY). */
  storedModseq: string | undefined;
  lastUid: number;
  /** While a `since` backfill is unfinished: its last UID (UIDs up to it are read only if SINCE matches). */
  sinceUntil: number | undefined;
  reset: boolean;
  uids: number[];
}

/**
 * Nothing to search for: the checkpoint names this UIDVALIDITY and this HIGHESTMODSEQ
 * (CONDSTORE: any change in the folder raises it) and every UID below UIDNEXT was read.
 */
function unchanged(pass: Omit<PassStart, 'uids'>): boolean {
  return !pass.reset && pass.modseq !== undefined && pass.modseq === pass.storedModseq && pass.uidNextAtStart - 1 <= pass.lastUid;
}

async function search(client: ImapFlow, config: ImapAccountConfig, folder: string, query: Record<string, unknown>): Promise<number[]> {
  const answer = await withDeadline(client.search(query, { uid: true }), config.command_timeout_ms, `UID SEARCH ${folder}`, () =>
    client.close(),
  );
  assertSelected(client, folder);
  if (!Array.isArray(answer)) throw new GatewayError('MAILGATE_ERR_IMAP_COMMAND', `UID SEARCH failed in "${folder}"`);
  return answer;
}

/**
 * UIDs above `lastUid`, ascending. Up to `sinceUntil` (a `since` backfill: the first read, or
 * its resumption after a crash) only mail received since that date; above it, mail of any date.
 */
async function searchNew(
  client: ImapFlow,
  config: ImapAccountConfig,
  folder: string,
  lastUid: number,
  sinceUntil: number | undefined,
  since: Date | undefined,
): Promise<number[]> {
  // "N:*" always matches the highest UID, even below N: each answer keeps only its own range.
  const newer = async (floor: number) => (await search(client, config, folder, { uid: `${floor + 1}:*` })).filter((u) => u > floor);
  if (since === undefined || sinceUntil === undefined || sinceUntil <= lastUid) return (await newer(lastUid)).sort((a, b) => a - b);
  const query = { uid: `${lastUid + 1}:${sinceUntil}`, since };
  const backfill = (await search(client, config, folder, query)).filter((u) => u > lastUid && u <= sinceUntil);
  return [...backfill, ...(await newer(sinceUntil))].sort((a, b) => a - b);
}

async function startPass(client: ImapFlow, ctx: SyncContext, folder: string): Promise<PassStart> {
  const { config } = ctx;
  // An already selected folder is examined again: some servers (Dovecot) never tell a session
  // that its selected folder was deleted and recreated; only a fresh EXAMINE shows it.
  const lock = await select(client, folder, config.command_timeout_ms, true);
  try {
    const box = client.mailbox as Exclude<ImapFlow['mailbox'], false>;
    const uidValidity = Number(box.uidValidity);
    const stored = readCheckpoint(await ctx.sink.checkpoint(checkpointKey(config.name, folder)));
    const reset = stored !== undefined && stored.uidValidity !== uidValidity;
    if (reset) ctx.onReset?.(stored.uidValidity, uidValidity);
    const lastUid = stored !== undefined && !reset ? stored.lastUid : 0;
    const start = {
      uidValidity,
      uidNextAtStart: box.uidNext,
      modseq: box.highestModseq === undefined ? undefined : box.highestModseq.toString(),
      storedModseq: reset ? undefined : stored?.highestModseq,
      lastUid,
      // A first read with `since` is a backfill up to what the folder holds now; remembered in
      // the checkpoint, so that a backfill interrupted by a crash still honours `since`.
      sinceUntil: ctx.since === undefined ? undefined : stored === undefined || reset ? box.uidNext - 1 : stored.sinceUntil,
      reset,
    };
    return { ...start, uids: unchanged(start) ? [] : await searchNew(client, config, folder, lastUid, start.sinceUntil, ctx.since) };
  } finally {
    lock.release();
  }
}

/**
 * Messages in the first chunk of a pass at most: the first chunk is fetched, parsed and stored
 * before anything reaches the API, and everything after it overlaps with the one before; a
 * smaller first chunk fills that pipeline sooner. Each later chunk may be CHUNK_GROWTH times the
 * one before, up to `batch_size` (25, 100, 400, then 500 at the defaults): a large second chunk
 * would leave intake and delivery idle while it is read.
 */
export const FIRST_CHUNK_MESSAGES = 25;
export const CHUNK_GROWTH = 4;

/** Messages of the pass's chunk that follows one of `previous` messages (0: the first chunk). */
export function chunkSize(previous: number, batchSize: number): number {
  return Math.min(batchSize, previous === 0 ? FIRST_CHUNK_MESSAGES : previous * CHUNK_GROWTH);
}

/**
 * A fetched slice as intake calls: whole, or the last slice of a pass in pieces (tailPieces).
 * Each piece's checkpoint is its highest UID, the last one's the slice's (UIDs that vanished
 * included); the messages the account's filter left out (judged on their header fields, never
 * handed to intake) go with the piece that covers them: the checkpoint moves past them, so they
 * are never read again.
 */
export function piecesOf(
  slice: ChunkSlice,
  endOfPass: boolean,
): Array<{ messages: FetchedMessage[]; covered: number; filtered: FilterReason[] }> {
  const sizes = endOfPass && slice.messages.length > 0 ? tailPieces(slice.messages.length) : [slice.messages.length];
  const out: Array<{ messages: FetchedMessage[]; covered: number; filtered: FilterReason[] }> = [];
  let from = 0;
  let left = 0;
  for (const [k, size] of sizes.entries()) {
    const messages = slice.messages.slice(from, from + size);
    from += size;
    const covered = k === sizes.length - 1 ? slice.lastUid : messages[messages.length - 1]!.uid;
    const start = left;
    while (left < slice.filtered.length && slice.filtered[left]!.uid <= covered) left++;
    out.push({ messages, covered, filtered: slice.filtered.slice(start, left).map((f) => f.reason) });
  }
  return out;
}

/**
 * One pass over `folder`. Each step (the search, then each chunk) runs through `ctx.exclusive`
 * on its own, so after-delivery actions can use the connection between two chunks of a long
 * backfill; every chunk re-selects the folder and checks that UIDVALIDITY did not change.
 */
export async function syncFolder(client: ImapFlow, ctx: SyncContext, folder: string): Promise<FolderResult> {
  const { config, sink, signal } = ctx;
  const exclusive = ctx.exclusive ?? (<T>(fn: () => Promise<T>) => fn());
  const afterDelivery = parseAfterDelivery(config.after_delivery).kind !== 'none';
  const key = checkpointKey(config.name, folder);
  const judge = ctx.filter === undefined || ctx.filter.passAll ? undefined : (header: Buffer) => ctx.filter!.judge(header);
  const pass = await exclusive(() => startPass(client, ctx, folder));
  const { uidValidity, uidNextAtStart, modseq, reset, uids } = pass;
  ctx.onPassStart?.(folder, uids.length);
  let lastUid = pass.lastUid;
  const value = (last: number) => ({
    key,
    value: checkpointValue({ uidValidity, lastUid: last, highestModseq: modseq, sinceUntil: pass.sinceUntil }),
  });
  let delivered = 0;
  // Slices handed to the sink and not yet durable (in-flight.ts): the connection reads on while
  // intake parses and stores them, up to batch_bytes of sources held. `lastUid` moves only once
  // a slice is durable, in UID order.
  const inFlight = new InFlight(config.batch_bytes, (a) => {
    lastUid = a.covered;
    delivered += a.count;
    ctx.onChunk?.(folder, a.count, a.stubbed);
    for (const reason of a.filtered) ctx.onFiltered?.(folder, reason);
  });
  try {
    let size = 0;
    for (let i = 0; i < uids.length && !signal.aborted; ) {
      size = chunkSize(size, config.batch_size);
      const chunk = uids.slice(i, i + size);
      i += chunk.length;
      await exclusive(async () => {
        const lock = await select(client, folder, config.command_timeout_ms, false);
        let pending: Promise<unknown> | undefined;
        try {
          const now = client.mailbox === false ? 0 : Number(client.mailbox.uidValidity);
          if (now !== uidValidity)
            throw new GatewayError('MAILGATE_ERR_IMAP_COMMAND', `UIDVALIDITY of "${folder}" changed during the pass`);
          const slices = fetchChunk(client, folder, chunk, config.batch_bytes, judge);
          const fetchNext = () => withDeadline(slices.next(), config.command_timeout_ms, `UID FETCH ${folder}`, () => client.close());
          // The next slice is read from the server while the sink stores the ones before it; the
          // checkpoint still moves only after each accept, in UID order.
          let ahead = fetchNext();
          for (;;) {
            const next = await ahead;
            if (next.done === true) break;
            ahead = fetchNext();
            pending = ahead.catch(() => undefined); // settled before the lock is released
            // The pass's last slice goes to intake in pieces (tailPieces), every other slice whole.
            const endOfPass = i >= uids.length && next.value.lastUid === chunk[chunk.length - 1];
            for (const piece of piecesOf(next.value, endOfPass)) {
              const batch: Inbound[] = piece.messages.map((m) => ({
                raw: m.raw,
                key: imapKey(config.name, folder, uidValidity, m.uid),
                route: config.route,
                receivedAt: m.internalDate ?? new Date(),
                origin: imapOrigin(config.name, folder, uidValidity, m.uid),
                ...(afterDelivery ? { afterDelivery } : {}),
              }));
              const bytes = batch.reduce((n, m) => n + m.raw.length, 0);
              const stubbed = piece.messages.filter((m) => m.stubbed).length;
              const { covered, filtered } = piece;
              await inFlight.push({ done: accept(sink, batch, value(covered)), covered, count: batch.length, stubbed, filtered, bytes });
            }
          }
        } finally {
          await pending;
          lock.release();
        }
      });
    }
    await inFlight.drain();
  } finally {
    // A failed pass still lets what it handed over finish, so the next pass starts from there.
    await inFlight.abandon();
  }
  // Every UID below UIDNEXT (as of the EXAMINE) was listed by the search: remember that, so a
  // `since` backfill or an empty folder is not searched from the start again; and remember a
  // new HIGHESTMODSEQ (flags changed), so the next pass over an unchanged folder needs no search.
  const complete = !signal.aborted && uidNextAtStart - 1 > lastUid;
  const newModseq = !signal.aborted && delivered === 0 && modseq !== undefined && modseq !== pass.storedModseq;
  if (complete || newModseq || (reset && delivered === 0 && !signal.aborted)) {
    lastUid = Math.max(lastUid, uidNextAtStart - 1);
    await accept(sink, [], value(lastUid));
  }
  return { uidValidity, lastUid, delivered, reset };
}
