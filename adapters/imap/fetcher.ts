/**
 * Fetches a chunk of messages of the selected folder: with an account filter, the header fields
 * it reads first (headers-first.ts), then of the messages it keeps: sizes and the first bytes of every
 * source, BODYSTRUCTURE of the larger ones, then per message either the whole source or only
 * its pieces (structure.ts, assemble.ts) — from the two ends of the source where they hold
 * them (ends.ts), else from the server's MIME parts.
 *
 * Every IMAP command here completes (fetchAll / fetchOne collect their answers) before the next
 * one is issued: no command ever runs inside a FETCH iteration, which deadlocks imapflow.
 */
import type { ImapFlow } from 'imapflow';
import { assemble, AssembleError } from './assemble.js';
import { judgeHeadersFirst, type Judge, type Judged } from './headers-first.js';
import { assertSelected, ensureGone, uidSet } from './uids.js';
import { fetchBodyStructures, fetchFirstBytes, fetchSourceRange } from './first-bytes.js';
import { piecesFromEnds, SUFFIX_BYTES } from './ends.js';
import {
  FIRST_FETCH_SOURCE_BYTES,
  HEAD_BYTES,
  headsFromPrefix,
  PIECES_MIN_MESSAGE_BYTES,
  planMessage,
  sectionsFor,
  stubParts,
  type MessagePlan,
} from './structure.js';

export interface FetchedMessage {
  uid: number;
  raw: Buffer;
  internalDate: Date | undefined;
  /** True when attachments were replaced by stub parts. */
  stubbed: boolean;
}

export interface ChunkSlice {
  messages: FetchedMessage[];
  /** Highest UID this slice covers (UIDs that vanished meanwhile included). */
  lastUid: number;
  /** Messages of this slice's range the account's filter left out (never fetched beyond their header fields). */
  filtered: Judged['filtered'];
}

interface Planned {
  uid: number;
  size: number;
  internalDate: Date | undefined;
  plan: MessagePlan;
  /** The whole source, when it came with the sizes (messages up to FIRST_FETCH_SOURCE_BYTES). */
  source?: Buffer;
  /** The first bytes of a larger source (they came with the sizes): the heads of its stubbed parts are often in them. */
  prefix?: Buffer;
}

function dateOf(v: Date | string | undefined): Date | undefined {
  if (v === undefined) return undefined;
  const d = v instanceof Date ? v : new Date(v);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/**
 * Sizes and dates first, with the first FIRST_FETCH_SOURCE_BYTES of each source: a small
 * message (most plain-text mail) is then complete in this one FETCH. BODYSTRUCTURE in a second
 * FETCH, only for messages large enough to hold an attachment worth leaving on the server: a
 * structure costs the server a parse of the message and the client a parse of a long response
 * (and imapflow another walk to log it), which small messages never use.
 */
async function planChunk(client: ImapFlow, folder: string, uids: number[]): Promise<Planned[]> {
  assertSelected(client, folder);
  const metas = await fetchFirstBytes(client, uidSet(uids), FIRST_FETCH_SOURCE_BYTES);
  assertSelected(client, folder);
  const got = new Set(metas.map((m) => m.uid));
  await ensureGone(
    client,
    folder,
    uids.filter((u) => !got.has(u)),
  );
  const structures = await fetchStructures(
    client,
    folder,
    metas.filter((m) => (m.size ?? 0) >= PIECES_MIN_MESSAGE_BYTES).map((m) => m.uid),
  );
  const small: MessagePlan = { mode: 'source', reason: 'small message' };
  return metas
    .map((m) => {
      const p: Planned = { uid: m.uid, size: m.size ?? 0, internalDate: dateOf(m.internalDate), plan: structures.get(m.uid) ?? small };
      // Complete only when the server's size says so; a partial answer is never used as a message.
      if (m.size !== undefined && m.size <= FIRST_FETCH_SOURCE_BYTES && m.source?.length === m.size) p.source = m.source;
      else if (m.source !== undefined && p.plan.mode === 'pieces') p.prefix = m.source;
      return p;
    })
    .sort((a, b) => a.uid - b.uid);
}

/**
 * The plans of the large messages, from their BODYSTRUCTURE. A message expunged between the two
 * FETCHes has no plan: it is then read as a whole source, whose FETCH finds it gone.
 */
async function fetchStructures(client: ImapFlow, folder: string, uids: number[]): Promise<Map<number, MessagePlan>> {
  const plans = new Map<number, MessagePlan>();
  if (uids.length === 0) return plans;
  const got = await fetchBodyStructures(client, uidSet(uids));
  assertSelected(client, folder);
  for (const m of got) plans.set(m.uid, planMessage(m.bodyStructure));
  return plans;
}

/** Bytes a message is expected to cost on the wire under its plan (none when its source is here). */
function wireBytes(p: Planned): number {
  if (p.source !== undefined) return 0;
  return p.plan.mode === 'source' ? p.size : Math.max(1024, p.size / 16);
}

async function fetchSources(client: ImapFlow, folder: string, items: Planned[]): Promise<Map<number, Buffer>> {
  const out = new Map<number, Buffer>();
  if (items.length === 0) return out;
  const got = await client.fetchAll(uidSet(items.map((p) => p.uid)), { uid: true, source: true }, { uid: true });
  assertSelected(client, folder);
  for (const m of got) if (m.source !== undefined) out.set(m.uid, m.source);
  await ensureGone(
    client,
    folder,
    items.map((p) => p.uid).filter((u) => !out.has(u)),
  );
  return out;
}

/**
 * The first bytes of every stubbed part: from the source prefix that came with the sizes
 * where it holds them (usually), else one FETCH per distinct set of missing part numbers
 * (usually one or two per slice): UID → part → head.
 */
async function fetchHeads(client: ImapFlow, folder: string, items: Planned[]): Promise<Map<number, Map<string, Buffer>>> {
  const out = new Map<number, Map<string, Buffer>>();
  const bySet = new Map<string, number[]>();
  for (const p of items) {
    if (p.plan.mode !== 'pieces') continue;
    const heads = p.prefix === undefined ? new Map<string, Buffer>() : headsFromPrefix(p.plan.root, p.prefix);
    out.set(p.uid, heads);
    const missing = stubParts(p.plan.root).filter((part) => !heads.has(part));
    if (missing.length === 0) continue;
    const key = missing.join(' ');
    bySet.set(key, [...(bySet.get(key) ?? []), p.uid]);
  }
  for (const [key, uids] of bySet) {
    const bodyParts = key.split(' ').map((part) => ({ key: part, start: 0, maxLength: HEAD_BYTES }));
    const got = await client.fetchAll(uidSet(uids), { uid: true, bodyParts }, { uid: true });
    assertSelected(client, folder);
    for (const m of got) {
      const heads = out.get(m.uid) ?? new Map<string, Buffer>();
      for (const [k, v] of m.bodyParts ?? []) heads.set(k.toLowerCase(), v);
      out.set(m.uid, heads);
    }
  }
  return out;
}

/** Identical FETCH section lists (same shape, same tail offsets) share one command. */
function groupBySections(items: Planned[]): Map<string, { sections: ReturnType<typeof sectionsFor>; items: Planned[] }> {
  const groups = new Map<string, { sections: ReturnType<typeof sectionsFor>; items: Planned[] }>();
  for (const p of items) {
    if (p.plan.mode !== 'pieces') continue;
    const sections = sectionsFor(p.plan.root);
    const key = sections.map((q) => `${q.key}<${q.start ?? ''}.${q.maxLength ?? ''}>`).join(' ');
    const group = groups.get(key);
    if (group === undefined) groups.set(key, { sections, items: [p] });
    else group.items.push(p);
  }
  return groups;
}

function assembleOrUndefined(
  item: Planned,
  header: Buffer | undefined,
  parts: Map<string, Buffer> | undefined,
  heads: Map<string, Buffer> | undefined,
): Buffer | undefined {
  if (item.plan.mode !== 'pieces') return undefined;
  try {
    return assemble(item.plan.root, header, parts, heads);
  } catch (err) {
    if (err instanceof AssembleError) return undefined;
    throw err;
  }
}

/**
 * Header and pieces of every stubbed message: one UID FETCH per group of messages asking for
 * the same sections (all answers collected first, assembled afterwards). UID → message, or
 * no entry when the structure proved untrustworthy (the caller falls back to the source).
 */
async function fetchPieces(
  client: ImapFlow,
  folder: string,
  items: Planned[],
  heads: Map<number, Map<string, Buffer>>,
): Promise<Map<number, Buffer>> {
  const out = new Map<number, Buffer>();
  for (const { sections, items: group } of groupBySections(items).values()) {
    const uids = group.map((p) => p.uid).sort((a, b) => a - b);
    const got = await client.fetchAll(uidSet(uids), { uid: true, headers: true, bodyParts: sections }, { uid: true });
    assertSelected(client, folder);
    const byUid = new Map(got.map((m) => [m.uid, m]));
    for (const p of group) {
      const m = byUid.get(p.uid);
      if (m === undefined) continue;
      const raw = assembleOrUndefined(p, m.headers, m.bodyParts, heads.get(p.uid));
      if (raw !== undefined) out.set(p.uid, raw);
    }
  }
  return out;
}

/** Where the suffix of a stubbed message starts: past its prefix, SUFFIX_BYTES before its end. */
function suffixStart(p: Planned): number {
  return Math.max(p.prefix?.length ?? 0, p.size - SUFFIX_BYTES);
}

/**
 * Stubbed messages assembled from the two ends of their source (ends.ts): the prefix came with
 * the sizes; the suffix is one partial FETCH of the whole message per distinct (start, size),
 * which the server serves without parsing the message's MIME structure. UID → message.
 */
async function fetchFromEnds(client: ImapFlow, folder: string, items: Planned[]): Promise<Map<number, Buffer>> {
  const out = new Map<number, Buffer>();
  const groups = new Map<string, Planned[]>();
  for (const p of items) {
    if (p.plan.mode !== 'pieces' || p.prefix === undefined || suffixStart(p) >= p.size) continue;
    const key = `${suffixStart(p)}:${p.size}`;
    groups.set(key, [...(groups.get(key) ?? []), p]);
  }
  for (const group of groups.values()) {
    const first = group[0]!;
    const start = suffixStart(first);
    const got = await fetchSourceRange(client, uidSet(group.map((p) => p.uid)), start, first.size - start);
    assertSelected(client, folder);
    const byUid = new Map(got.map((m) => [m.uid, m.source]));
    for (const p of group) {
      const suffix = byUid.get(p.uid);
      if (p.plan.mode !== 'pieces' || suffix === undefined || suffix.length !== p.size - start) continue;
      const ends = piecesFromEnds(p.plan.root, { prefix: p.prefix!, suffix, suffixStart: start });
      if (ends === undefined) continue;
      const raw = assembleOrUndefined(p, ends.header, ends.parts, ends.heads);
      if (raw !== undefined) out.set(p.uid, raw);
    }
  }
  return out;
}

async function fetchSlice(client: ImapFlow, folder: string, items: Planned[]): Promise<FetchedMessage[]> {
  const raws = new Map<number, { raw: Buffer; stubbed: boolean }>();
  const fromEnds = await fetchFromEnds(client, folder, items);
  for (const [uid, raw] of fromEnds) raws.set(uid, { raw, stubbed: true });
  // What the ends did not hold: the pieces from the server's MIME parts.
  const rest = items.filter((p) => !fromEnds.has(p.uid));
  const heads = await fetchHeads(client, folder, rest);
  const pieces = await fetchPieces(client, folder, rest, heads);
  for (const [uid, raw] of pieces) raws.set(uid, { raw, stubbed: true });
  for (const p of items) if (p.source !== undefined) raws.set(p.uid, { raw: p.source, stubbed: false });
  // Unplannable messages, stubbed ones whose pieces did not assemble, and small ones whose
  // source did not come complete with the sizes: the whole source.
  const needSource = rest.filter((p) => !pieces.has(p.uid) && p.source === undefined);
  for (const [uid, raw] of await fetchSources(client, folder, needSource)) raws.set(uid, { raw, stubbed: false });
  const out: FetchedMessage[] = [];
  for (const p of items) {
    const got = raws.get(p.uid);
    // A message missing here was expunged meanwhile: it is gone, nothing to deliver.
    if (got !== undefined) out.push({ uid: p.uid, raw: got.raw, internalDate: p.internalDate, stubbed: got.stubbed });
  }
  return out;
}

/**
 * Fetches `uids` (ascending) in slices of at most `maxBytes` expected wire bytes (at least one
 * message each). The last slice covers up to the last requested UID. With `judge` (an account
 * filter), the header fields are fetched and judged first and only the kept messages are
 * fetched; each filtered UID is reported by the slice that covers it.
 */
export async function* fetchChunk(
  client: ImapFlow,
  folder: string,
  uids: number[],
  maxBytes: number,
  judge?: Judge,
): AsyncGenerator<ChunkSlice> {
  if (uids.length === 0) return;
  const { kept, filtered } = judge === undefined ? { kept: uids, filtered: [] } : await judgeHeadersFirst(client, folder, uids, judge);
  const planned = kept.length === 0 ? [] : await planChunk(client, folder, kept);
  const lastRequested = uids[uids.length - 1] as number;
  let left = 0;
  const filteredUpTo = (uid: number): ChunkSlice['filtered'] => {
    const from = left;
    while (left < filtered.length && filtered[left]!.uid <= uid) left++;
    return filtered.slice(from, left);
  };
  let slice: Planned[] = [];
  let bytes = 0;
  for (let i = 0; i < planned.length; i++) {
    const p = planned[i] as Planned;
    if (slice.length > 0 && bytes + wireBytes(p) > maxBytes) {
      const lastUid = (slice[slice.length - 1] as Planned).uid;
      yield { messages: await fetchSlice(client, folder, slice), lastUid, filtered: filteredUpTo(lastUid) };
      slice = [];
      bytes = 0;
    }
    slice.push(p);
    bytes += wireBytes(p);
  }
  yield { messages: await fetchSlice(client, folder, slice), lastUid: lastRequested, filtered: filteredUpTo(lastRequested) };
}
