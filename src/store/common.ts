/**
 * Pieces both store implementations share: argument checks, JSON columns, error wrapping.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, isGatewayError, type ErrorCode } from '../errors.js';
import { parseLimit } from '../limits.js';
import type { DocumentHashes } from '../ledger/index.js';
import type { Comment, RawEmailDocument } from '../model/index.js';
import { storedOrigin, type Origin } from '../model/origin.js';
import type {
  Fence,
  ItemError,
  Lease,
  ItemState,
  OutboxInput,
  OutboxItem,
  OutboxStatus,
  OwnerInfo,
  PurgeFilter,
  RouteCounters,
  ThreadEntry,
} from './types.js';

/** Upper bound for `limit` in claims and listings: bounds memory per call. */
export const MAX_STORE_LIMIT = 10_000;
/** Upper bound for lease and retry delays: 30 days. */
export const MAX_STORE_DELAY_MS = 30 * 24 * 3600 * 1000;

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_STORE_INVALID_ARGUMENT', message);
}

/** An integer argument of a store operation within [min, max], else MAILGATE_ERR_STORE_INVALID_ARGUMENT naming it. */
export function checkCount(name: string, n: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return parseLimit(name, n, n, { min, max, code: 'MAILGATE_ERR_STORE_INVALID_ARGUMENT' });
}

export function checkLimit(limit: number): number {
  return checkCount('limit', limit, 1, MAX_STORE_LIMIT);
}

/** Lease TTLs must be positive; retry delays may be 0 (due at once). In milliseconds. */
export function checkDelay(name: string, ms: number, min: 0 | 1): number {
  return checkCount(name, ms, min, MAX_STORE_DELAY_MS);
}

export function checkAiUnits(n: number): number {
  return checkCount('AI units', n, 0);
}

export function checkPurgeFilter(filter: PurgeFilter): void {
  const set = filter.ids !== undefined || filter.route !== undefined || filter.olderThan !== undefined;
  if (!set && filter.all !== true) {
    throw invalid('purging dead letters needs ids, route, olderThan, or all: true');
  }
}

export function checkReplay(row: { route: string; key: string }, replacement: OutboxInput): void {
  if (row.route !== replacement.route || row.key !== replacement.key) {
    throw new GatewayError(
      'MAILGATE_ERR_STORE_REPLAY_MISMATCH',
      `replacement is for ${replacement.route}/${replacement.key}, the dead letter is ${row.route}/${row.key}`,
    );
  }
}

export function notFound(what: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_STORE_NOT_FOUND', `${what} does not exist in the store`);
}

export function leaseLost(name: string, owner: string, holder: string | undefined): GatewayError {
  const by = holder === undefined ? 'nobody holds it' : `held by ${holder}`;
  return new GatewayError('MAILGATE_ERR_STORE_LEASE_LOST', `lease ${name} is no longer held by ${owner} (${by})`);
}

/** A write that carried a stale fencing token: it wrote nothing. */
export function fenced(fence: Fence): GatewayError {
  return new GatewayError(
    'MAILGATE_ERR_STORE_FENCED',
    `lease ${fence.lease} is no longer held by ${fence.owner} with token ${fence.token}: the write was refused`,
  );
}

/** A stored error column back to an ItemError (tolerates what an older schema wrote). */
export function parseItemError(text: string | null | undefined): ItemError | undefined {
  if (text === null || text === undefined) return undefined;
  const v = JSON.parse(text) as Partial<ItemError>;
  return { code: String(v.code ?? 'UNKNOWN'), message: String(v.message ?? '') };
}

/** An outbox row as both stores read it for itemState(), times as Date or Unix ms. */
export interface ItemStateRow {
  id: number;
  route: string;
  key: string;
  comment_id: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: Date | number;
  enqueued_at: Date | number;
  finished_at: Date | number | null;
  outcome: string | null;
  error: ItemError | undefined;
}

/** The narrow state of an item (upload status): the same rules in both stores. */
export function itemStateOf(r: ItemStateRow): ItemState {
  const iso = (t: Date | number): string => new Date(t).toISOString();
  const state: ItemState = {
    id: r.id,
    route: r.route,
    key: r.key,
    commentId: r.comment_id,
    status: r.status,
    attempts: r.attempts,
    enqueuedAt: iso(r.enqueued_at),
  };
  if (r.status === 'queued') state.nextAttemptAt = iso(r.next_attempt_at);
  if (r.finished_at !== null) state.finishedAt = iso(r.finished_at);
  if (r.outcome === 'delivered' || r.outcome === 'unchanged') state.outcome = r.outcome;
  if (r.error !== undefined) state.error = r.error;
  return state;
}

/** An outbox item's fields besides its document and preview, as a store reads them. */
export type ItemFields = Omit<OutboxItem, 'document' | 'documentJson' | 'hashes' | 'preview' | 'origin'> & {
  /** The origin, or the JSON text stored for it (read as `storedOrigin` reads it, when first read). */
  origin: Origin | string;
};

/**
 * An outbox item whose document, preview and origin are parsed from their stored JSON text only
 * when read: delivery, the main reader of claimed items, sends the text, never reads the preview,
 * and reads the origin only for listeners of its item events. One class, so that a claim of
 * thousands builds objects of one shape with no closures or accessors of their own; the parsed
 * values are private fields. `document`, `preview` and `origin` being accessors of the class, a
 * copy (`{...item}`, JSON) leaves them out: `plainItem` makes one that has them.
 */
export class LazyOutboxItem implements OutboxItem {
  id: number;
  route: string;
  key: string;
  commentId: string;
  warnings: OutboxItem['warnings'];
  attempts: number;
  enqueuedAt: string;
  documentJson: string;
  declare hashes?: DocumentHashes;
  declare lastError?: ItemError;
  #document: RawEmailDocument | undefined;
  /** The preview's JSON text until it is parsed or replaced; null when there is none. */
  #previewJson: string | null;
  #preview: Comment | undefined;
  /** The origin's JSON text until it is parsed or replaced. */
  #originJson: string | null;
  #origin: Origin | undefined;

  constructor(fields: ItemFields, json: string, hashes: DocumentHashes | undefined, previewJson: string | null) {
    this.id = fields.id;
    this.route = fields.route;
    this.key = fields.key;
    this.commentId = fields.commentId;
    this.warnings = fields.warnings;
    this.attempts = fields.attempts;
    this.enqueuedAt = fields.enqueuedAt;
    this.documentJson = json;
    if (hashes !== undefined) this.hashes = hashes;
    if (fields.lastError !== undefined) this.lastError = fields.lastError;
    this.#previewJson = previewJson;
    this.#originJson = typeof fields.origin === 'string' ? fields.origin : null;
    if (typeof fields.origin !== 'string') this.#origin = fields.origin;
  }

  get origin(): Origin {
    if (this.#originJson !== null) {
      this.#origin = storedOrigin(JSON.parse(this.#originJson), this.key);
      this.#originJson = null;
    }
    return this.#origin!;
  }

  set origin(value: Origin) {
    this.#originJson = null;
    this.#origin = value;
  }

  get document(): RawEmailDocument {
    return (this.#document ??= JSON.parse(this.documentJson) as RawEmailDocument);
  }

  /** Replacing the document replaces its text too, and its hashes no longer apply. */
  set document(value: RawEmailDocument) {
    this.#document = value;
    this.documentJson = JSON.stringify(value);
    delete this.hashes;
  }

  get preview(): Comment | undefined {
    if (this.#previewJson !== null) {
      this.#preview = JSON.parse(this.#previewJson) as Comment;
      this.#previewJson = null;
    }
    return this.#preview;
  }

  set preview(value: Comment | undefined) {
    this.#previewJson = null;
    this.#preview = value;
  }
}

/** The item as a plain object with its origin, document (and preview, if any) parsed: what `getItem` answers. */
export function plainItem(item: OutboxItem): OutboxItem {
  const { document, preview, origin } = item;
  const out: OutboxItem = { ...item, origin, document };
  if (preview !== undefined) out.preview = preview;
  return out;
}

/** Both stored hash columns, or undefined when either is missing (items stored before migration 4). */
export function hashesOf(text: string | null | undefined, doc: string | null | undefined): DocumentHashes | undefined {
  return typeof text === 'string' && typeof doc === 'string' ? { textHash: text, docHash: doc } : undefined;
}

export function jsonOrNull(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

export function parseJson<T>(text: string | null | undefined): T | undefined {
  return text === null || text === undefined ? undefined : (JSON.parse(text) as T);
}

/**
 * Wraps a driver failure in a coded GatewayError: `unavailable` decides which failures mean
 * "cannot reach or open the store" (retry later); the rest are rolled-back writes.
 */
export function wrapStoreError(err: unknown, unavailable: (err: unknown) => boolean, what: string): GatewayError {
  if (isGatewayError(err)) return err;
  const code: ErrorCode = unavailable(err) ? 'MAILGATE_ERR_STORE_UNAVAILABLE' : 'MAILGATE_ERR_STORE_WRITE_FAILED';
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError(code, `${what}: ${message}`, { cause: err });
}

/** Adds each item's count to its route. */
export function countByRoute(routes: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of routes) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

/** The thread index entries items carry, by source (sources sorted, so concurrent writers lock in one order). */
/** Orders strings by UTF-16 code units (JavaScript's `<`): a comparator to chain with `||` for sorts by several keys. */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function threadsBySource(items: readonly OutboxInput[]): Array<[string, ThreadEntry[]]> {
  const bySource = new Map<string, ThreadEntry[]>();
  for (const { thread } of items) {
    if (thread === undefined) continue;
    const list = bySource.get(thread.source) ?? [];
    list.push(thread.entry);
    bySource.set(thread.source, list);
  }
  return [...bySource].sort(([a], [b]) => byCodeUnits(a, b));
}

/** The per-route counters of `route_counters`. */
export type CounterName = 'enqueued' | 'delivered' | 'unchanged' | 'dead_lettered' | 'ai_units';

/** The columns of `route_counters`, in this order (PostgreSQL adds `route_counts` to them). */
export const ROUTE_COUNTER_COLUMNS = 'route, enqueued, delivered, unchanged, dead_lettered, ai_units';

/** One `route_counters` row (numbers as the driver returns them: numbers or bigint strings). */
export function routeCountersFromRow(r: Record<string, number | string>): RouteCounters {
  return {
    route: String(r.route),
    enqueued: Number(r.enqueued),
    delivered: Number(r.delivered),
    unchanged: Number(r.unchanged),
    deadLettered: Number(r.dead_lettered),
    aiUnits: Number(r.ai_units),
  };
}

/** Upper bound for an owner's heartbeat interval: 1 hour. */
export const MAX_HEARTBEAT_MS = 3_600_000;

export function checkOwner(owner: { id: string; host: string; pid: number; heartbeatMs: number }): void {
  if (typeof owner.id !== 'string' || owner.id === '') throw invalid('an owner needs a non-empty id');
  checkCount("an owner's pid", owner.pid, 0);
  checkCount('heartbeatMs', owner.heartbeatMs, 1, MAX_HEARTBEAT_MS);
}

export function checkMissedBeats(n: number): number {
  return checkCount('missedBeats', n, 1, 1000);
}

/** An `owners` row as either driver returns it (times as Unix ms or Date, integers maybe as strings). */
export interface OwnerRow {
  id: string;
  host: string;
  pid: number | string;
  proc_start: string | null;
  heartbeat_ms: number | string;
  lease_group: string | null;
  started_at: number | Date;
  heartbeat_at: number | Date;
}

/** A registered owner read back, its heartbeat `heartbeatAgeMs` old by the store's clock. */
export function ownerInfoOf(r: OwnerRow, heartbeatAgeMs: number): OwnerInfo {
  return {
    id: r.id,
    host: r.host,
    pid: Number(r.pid),
    ...(r.proc_start === null ? {} : { procStart: r.proc_start }),
    heartbeatMs: Number(r.heartbeat_ms),
    ...(r.lease_group === null ? {} : { group: r.lease_group }),
    startedAt: new Date(r.started_at).toISOString(),
    heartbeatAt: new Date(r.heartbeat_at).toISOString(),
    heartbeatAgeMs,
  };
}

/** A registered owner as `mailgate status` and `/api/status` list it. */
export interface OwnerSummary {
  id: string;
  host: string;
  pid: number;
  startedAt: string;
  heartbeatAt: string;
  heartbeatAgeMs: number;
  /** A `mailgate serve` replica taking mailbox leases: its group (replicas of one configuration share it). */
  group?: string;
  /** The mailbox leases it holds, by name. */
  leases: string[];
}

export function ownerSummary(o: Omit<OwnerSummary, 'leases'>, leases: readonly Lease[] = []): OwnerSummary {
  return {
    id: o.id,
    host: o.host,
    pid: o.pid,
    startedAt: o.startedAt,
    heartbeatAt: o.heartbeatAt,
    heartbeatAgeMs: o.heartbeatAgeMs,
    ...(o.group === undefined ? {} : { group: o.group }),
    leases: leases.filter((l) => l.owner === o.id).map((l) => l.name),
  };
}

/** The largest space probe (`MaintenanceStore.probeSpace`). */
export const MAX_SPACE_PROBE_BYTES = 16 * 1024 * 1024;

/**
 * The checkpoint row a space probe writes and deletes in one transaction: a key no checkpoint
 * uses (`space-probe:` and random) and `bytes` of random hex as a JSON string, which neither
 * backend can compress.
 */
export function spaceProbeRow(bytes: number): { key: string; value: string } {
  checkCount('space probe bytes', bytes, 1, MAX_SPACE_PROBE_BYTES);
  const filler = randomBytes(Math.ceil(bytes / 2))
    .toString('hex')
    .slice(0, bytes);
  return { key: `space-probe:${randomBytes(6).toString('hex')}`, value: JSON.stringify(filler) };
}
