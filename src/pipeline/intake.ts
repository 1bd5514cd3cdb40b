/**
 * Intake: adapter batches -> parse (worker pool) -> document and preview -> one store
 * transaction together with the adapter's checkpoint. `accept` resolves only once every
 * message of the batch is durable, so the adapter acknowledges nothing early.
 */
import { createHash } from 'node:crypto';
import { isGatewayError, type Warning } from '../errors.js';
import type { RouteConfig } from '../config/schema.js';
import type { RawEmailDocument } from '../model/index.js';
import { NO_FACTS } from '../preview/facts.js';
import type { PreviewOptions } from '../preview/types.js';
import type { Fence, OutboxInput, Store } from '../store/types.js';
import type { EncodedPreview, ThreadFacts } from './encoded.js';
import type { RuntimeEvents } from './events.js';
import { unwrapJournals } from './journal-intake.js';
import { outboxKey, resolveUserProperties, routeTarget } from './origin.js';
import type { Checkpoint, Inbound, IntakeSink } from './types.js';

/** Parses one message; `encodePreview(await preview(raw, options))` does it in this thread. */
export type ParseFn = (raw: Buffer, options: PreviewOptions) => Promise<EncodedPreview>;

/** A message ready for the outbox, with its place in a thread (none for parse failures). */
interface Parsed {
  input: OutboxInput;
  thread?: ThreadFacts;
}

/**
 * An outbox input built from JSON text: the store writes the text, the document object is
 * parsed only if something reads it. A class, so that the lazy getter lives on the prototype
 * rather than in a closure per message.
 */
class EncodedInput implements OutboxInput {
  readonly commentId: string;
  readonly json: { document: string };
  readonly hashes: EncodedPreview['hashes'];
  readonly warnings: EncodedPreview['warnings'];
  readonly facts: EncodedPreview['facts'];
  thread?: OutboxInput['thread'];
  readonly afterDelivery?: boolean;
  private parsed: RawEmailDocument | undefined;

  constructor(
    readonly route: string,
    readonly key: string,
    readonly origin: OutboxInput['origin'],
    readonly raw: Buffer,
    afterDelivery: boolean,
    r: EncodedPreview,
  ) {
    this.commentId = r.commentId;
    this.json = { document: r.document };
    this.hashes = r.hashes;
    this.warnings = r.warnings;
    this.facts = r.facts;
    if (afterDelivery) this.afterDelivery = true;
  }

  get document(): RawEmailDocument {
    return (this.parsed ??= JSON.parse(this.json.document) as RawEmailDocument);
  }
}

/** A message with its route and its outbox key. */
interface Keyed {
  msg: Inbound;
  route: RouteConfig;
  key: string;
  /** Warnings of a step before parsing (a malformed journal report), added to the item's. */
  warnings?: Warning[];
}

export interface IntakeCounters {
  received: number;
  parsed: number;
  failed: number;
  queued: number;
  duplicates: number;
}

export interface IntakeOptions {
  store: Store;
  routes: ReadonlyMap<string, RouteConfig>;
  parse: ParseFn;
  parsing: Pick<PreviewOptions, 'body' | 'headers' | 'maxMessageBytes'>;
  /** Intake waits while the outbox holds this many queued items (backpressure). */
  maxOutbox: number;
  /** How often a paused intake looks at the outbox again, in ms. */
  backpressurePollMs?: number;
  signal?: AbortSignal;
  /** Where each message's `item:stored` goes once its batch is durable. */
  events?: RuntimeEvents;
}

export interface Intake extends IntakeSink {
  readonly counters: IntakeCounters;
  /**
   * Parses messages into outbox inputs without storing them (push intake stores them itself):
   * the parse, budgets, route properties, thread entries and dead-letter inputs of `accept`
   * (an `Inbound.failure` or a parse error becomes an input with `error`, raw bytes kept), keyed
   * by `outboxKey`. Counted apart from `counters`; rejects only when parsing cannot run at all.
   */
  prepare(batch: Inbound[]): Promise<OutboxInput[]>;
}

export function createIntake(options: IntakeOptions): Intake {
  const { store, routes, parse, parsing } = options;
  const pollMs = options.backpressurePollMs ?? 100;
  const counters: IntakeCounters = { received: 0, parsed: 0, failed: 0, queued: 0, duplicates: 0 };

  // Every caller waiting for room (an IMAP service may have a thousand accounts blocked at once)
  // is woken by one listener on the shared signal rather than adding one each.
  const pausing = new Set<() => void>();
  options.signal?.addEventListener('abort', () => [...pausing].forEach((wake) => wake()), { once: true });

  /** Waits `pollMs`, or less when the signal aborts. */
  function pause(): Promise<void> {
    if (options.signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        pausing.delete(done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      pausing.add(done);
    });
  }

  /** Waits while any of these routes holds maxOutbox queued items (another route's backlog never stalls this one). */
  async function waitForRoom(names: ReadonlySet<string>): Promise<void> {
    for (const name of names) {
      while (!options.signal?.aborted && (await store.outboxDepth(name)) >= options.maxOutbox) await pause();
    }
  }

  function routeOf(msg: Inbound): RouteConfig {
    const route = routes.get(msg.route);
    if (!route) throw new Error(`intake: message for unknown route "${msg.route}"`);
    return route;
  }

  function keyedOf(msg: Inbound): Keyed {
    const route = routeOf(msg);
    return { msg, route, key: outboxKey(route, msg.origin, msg.raw) };
  }

  /** Keys of the batches accepted and not stored yet (route and key as JSON). */
  const pending = new Set<string>();

  /**
   * The messages whose key their route does not hold yet: a message read again (a re-walked
   * directory) is not parsed again.
   */
  async function unknown(keyed: Keyed[]): Promise<Keyed[]> {
    const keys = new Map<string, string[]>();
    for (const { msg, key } of keyed) {
      const list = keys.get(msg.route) ?? [];
      list.push(key);
      keys.set(msg.route, list);
    }
    const known = new Map<string, Set<string>>();
    for (const [route, list] of keys) known.set(route, await store.knownKeys(route, list));
    // A key twice in one batch, or in a batch accepted before and not stored yet, is a duplicate too.
    const fresh: Keyed[] = [];
    for (const k of keyed) {
      const id = JSON.stringify([k.msg.route, k.key]);
      if (known.get(k.msg.route)!.has(k.key) || pending.has(id)) continue;
      pending.add(id);
      fresh.push(k);
    }
    return fresh;
  }

  async function toOutbox({ msg, route, key, warnings }: Keyed, c: IntakeCounters = counters): Promise<Parsed> {
    const base = {
      route: route.name,
      key,
      origin: msg.origin,
      raw: msg.raw,
      ...(msg.afterDelivery === true ? { afterDelivery: true } : {}),
    };
    if (msg.failure !== undefined) {
      c.failed++;
      return { input: failed(base, msg, msg.failure) };
    }
    try {
      const userProperties = resolveUserProperties(route.user_properties, msg.origin);
      const parsed = await parse(msg.raw, { ...parsing, userProperties, receivedAt: msg.receivedAt });
      const result = warnings === undefined ? parsed : { ...parsed, warnings: [...parsed.warnings, ...warnings] };
      c.parsed++;
      return {
        input: new EncodedInput(route.name, key, msg.origin, msg.raw, msg.afterDelivery === true, result),
        ...(result.thread ? { thread: result.thread } : {}),
      };
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      c.failed++;
      return { input: failed(base, msg, { code: err.code, message: err.message }) };
    }
  }

  async function storeBatch(items: Parsed[], checkpoint: Checkpoint | undefined, fence: Fence | undefined): Promise<void> {
    // The thread index entries are written in the enqueue transaction.
    const result = await store.enqueue(
      items.map((i) => withThread(i, routes)),
      checkpoint,
      fence,
    );
    counters.queued += result.queued;
    counters.duplicates += result.duplicates;
  }

  /** One `item:stored` per message of a durable batch, in the batch's order. */
  function report(keyed: Keyed[], stored: Map<Keyed, Parsed>): void {
    const events = options.events;
    if (events === undefined || !events.has('item:stored')) return;
    for (const k of keyed) {
      const input = stored.get(k)?.input;
      const base = { route: k.route.name, adapter: k.msg.origin.adapter, key: k.key, via: 'pull' as const };
      if (input === undefined) events.emit('item:stored', { ...base, outcome: 'duplicate' });
      else if (input.error !== undefined) events.emit('item:stored', { ...base, outcome: 'dead', error: input.error });
      else events.emit('item:stored', { ...base, outcome: 'queued' });
    }
  }

  /**
   * Stores happen one at a time, in the order `accept` was called: a batch's parsing may
   * overlap the previous batch's store, but its checkpoint is written only after the previous
   * batch is durable, and never when the previous batch failed.
   */
  let storing: Promise<void> = Promise.resolve();

  /** Runs `step` behind the batches accepted before it; a failure fails the batches queued behind it. */
  function inOrder(step: (previous: Promise<void>) => Promise<void>): Promise<void> {
    const done = step(storing);
    storing = done;
    // Once the last batch has failed, a later accept (e.g. an adapter retrying) starts afresh.
    done.catch(() => {
      if (storing === done) storing = Promise.resolve();
    });
    return done;
  }

  return {
    counters,
    async checkpoint(key: string) {
      return store.getCheckpoint(key);
    },
    async prepare(batch: Inbound[]): Promise<OutboxInput[]> {
      const apart: IntakeCounters = { received: 0, parsed: 0, failed: 0, queued: 0, duplicates: 0 };
      const unwrapped = await unwrapJournals(batch.map(keyedOf), store);
      return (await Promise.all(unwrapped.map((k) => toOutbox(k, apart)))).map((p) => withThread(p, routes));
    },
    accept(batch: Inbound[], checkpoint?: Checkpoint, fence?: Fence): Promise<void> {
      return inOrder(async (previous) => {
        if (batch.length === 0) {
          await previous;
          if (checkpoint) await store.setCheckpoint(checkpoint.key, checkpoint.value, fence);
          return;
        }
        await waitForRoom(new Set(batch.map((m) => m.route)));
        counters.received += batch.length;
        const keyed = batch.map(keyedOf);
        const fresh = await unknown(keyed);
        try {
          counters.duplicates += batch.length - fresh.length;
          // Journal reports of one message in consecutive batches: the earlier batch must be
          // durable before this one looks up what it stored (the envelope union).
          if (fresh.some((k) => k.route.unwrap === 'exchange_journal')) await previous;
          // Same length and order as `fresh`: items[i] is fresh[i]'s.
          const items = await Promise.all((await unwrapJournals(fresh, store)).map((k) => toOutbox(k)));
          await previous;
          await storeBatch(items, checkpoint, fence);
          report(keyed, new Map(fresh.map((k, i) => [k, items[i]!])));
        } finally {
          for (const k of fresh) pending.delete(JSON.stringify([k.msg.route, k.key]));
        }
      });
    },
  };
}

/** A dead letter for a message that could not be read or parsed: its bytes kept, an empty document. */
function failed(base: Omit<OutboxInput, 'commentId' | 'document'>, msg: Inbound, error: { code: string; message: string }): OutboxInput {
  const commentId = createHash('sha256').update(msg.raw).digest('hex');
  return { ...base, commentId, document: { raw_email: { headers: { raw: '' }, body: { plain: '' } } }, facts: NO_FACTS, error };
}

/** The item with its entry of the per-target thread index, so previews show thread properties across runs. */
function withThread({ input, thread }: Parsed, routes: ReadonlyMap<string, RouteConfig>): OutboxInput {
  // Set on the object itself: a spread would read (and parse) its lazy document and preview.
  if (thread) input.thread = { source: routeTarget(routes.get(input.route)!), entry: { commentId: input.commentId, ...thread } };
  return input;
}
