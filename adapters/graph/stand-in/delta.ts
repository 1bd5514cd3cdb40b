/**
 * Delta rounds of `/users/{u}/mailFolders/{f}/messages/delta` (learn.microsoft.com/graph/
 * delta-query-messages): an initial round lists the folder's messages page by page
 * (`@odata.nextLink`), ending with an `@odata.deltaLink`; that link later answers only what
 * changed since, each message once with its latest state, removals as `@removed` rows. Query
 * options of the first request (`$select`, `changeType`) are carried inside the links. A token
 * minted before the folder's sync state expired answers 410 Gone (or, as documented elsewhere,
 * a `syncStateNotFound` error).
 */
import type { Folder, Mailbox } from './mailboxes.js';
import { messageResource } from './message.js';

export interface DeltaState {
  /** Folder epoch when the token was minted. */
  e: number;
  /** The round's base: changes after this sequence number (0 = an initial round). */
  s: number;
  /** The round's end: the sequence number when the round started. */
  u: number;
  /** Items of the round already returned. */
  o: number;
  /** `$select` of the first request. */
  sel?: string[];
  /** `changeType` filter of the first request. */
  ct?: string;
}

export function encodeToken(state: DeltaState): string {
  return Buffer.from(JSON.stringify(state)).toString('base64url');
}

export function decodeToken(token: string): DeltaState | undefined {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString()) as DeltaState;
    return typeof v.e === 'number' && typeof v.s === 'number' ? v : undefined;
  } catch {
    return undefined;
  }
}

interface Row {
  id: string;
  removed: boolean;
}

/** The rows of a round, in a stable order: an initial round by arrival, a later one by latest change. */
function rows(folder: Folder, base: number, upto: number, changeType: string | undefined): Row[] {
  if (base === 0) {
    return [...folder.arrived.entries()]
      .filter(([, seq]) => seq <= upto)
      .sort((a, b) => a[1] - b[1])
      .map(([id]) => ({ id, removed: false }));
  }
  const latest = new Map<string, { seq: number; kind: string }>();
  for (const c of folder.log) if (c.seq > base && c.seq <= upto) latest.set(c.id, { seq: c.seq, kind: c.kind });
  const out = [...latest.entries()].sort((a, b) => a[1].seq - b[1].seq);
  const wanted = changeType?.split(',').map((t) => t.trim());
  return out
    .filter(([, c]) => wanted === undefined || wanted.includes(c.kind === 'removed' ? 'deleted' : c.kind))
    .map(([id, c]) => ({ id, removed: c.kind === 'removed' || !folder.messages.has(id) }));
}

export interface DeltaPageInput {
  mailbox: Mailbox;
  folder: Folder;
  /** The state from the link, or undefined for a first request. */
  state: DeltaState | undefined;
  select?: string[];
  changeType?: string;
  pageSize: number;
  bodyType: 'text' | 'html';
  /** Current global sequence number. */
  seq: number;
  /** Absolute URL of the folder's delta function, without query. */
  link: string;
}

export function deltaPage(input: DeltaPageInput): Record<string, unknown> {
  const { folder } = input;
  const st: DeltaState = input.state ?? {
    e: folder.epoch,
    s: 0,
    u: input.seq,
    o: 0,
    ...(input.select ? { sel: input.select } : {}),
    ...(input.changeType ? { ct: input.changeType } : {}),
  };
  const all = rows(folder, st.s, st.u, st.ct);
  const page = all.slice(st.o, st.o + input.pageSize);
  const value = page.map((r) => {
    const m = folder.messages.get(r.id);
    if (r.removed || m === undefined) return { '@odata.type': '#microsoft.graph.message', id: r.id, '@removed': { reason: 'deleted' } };
    return {
      '@odata.type': '#microsoft.graph.message',
      ...messageResource(m, folder.id, { ...(st.sel ? { select: st.sel } : {}), bodyType: input.bodyType }),
    };
  });
  const more = st.o + page.length < all.length;
  const next: DeltaState = more
    ? { ...st, o: st.o + page.length }
    : { e: st.e, s: st.u, u: st.u, o: 0, ...(st.sel ? { sel: st.sel } : {}), ...(st.ct ? { ct: st.ct } : {}) };
  const body: Record<string, unknown> = { '@odata.context': `${input.link.split('/v1.0/')[0]}/v1.0/$metadata#Collection(message)`, value };
  if (more) body['@odata.nextLink'] = `${input.link}?$skiptoken=${encodeToken(next)}`;
  else body['@odata.deltaLink'] = `${input.link}?$deltatoken=${encodeToken(next)}`;
  return body;
}

/** A later round starts where the link says: `u` is reset to the sequence number at its first page. */
export function resumeState(state: DeltaState, isDeltaToken: boolean, seq: number): DeltaState {
  return isDeltaToken ? { ...state, u: seq, o: 0 } : state;
}
