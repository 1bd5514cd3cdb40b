/**
 * Intake: adapter batches -> parse (worker pool) -> document and preview -> one store
 * transaction together with the adapter's checkpoint. `accept` resolves only once every
 * message of the batch is durable, so the adapter acknowledges nothing early.
 */
import { createHash } from 'node:crypto';
import { isGatewayError } from '../errors.js';
import type { RouteConfig } from '../config/schema.js';
import type { PreviewOptions, PreviewResult } from '../preview/types.js';
import type { OutboxInput, Store, ThreadEntry } from '../store/types.js';
import { addressesOf, keyFor, resolveUserProperties, routeTarget } from './origin.js';
import type { Checkpoint, Inbound, IntakeSink } from './types.js';
import { sleep } from './sleep.js';

export type ParseFn = (raw: Buffer, options: PreviewOptions) => Promise<PreviewResult>;

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
  /** Called after each durable batch, e.g. for metrics and progress. */
  onBatch?: (route: string, counters: IntakeCounters) => void;
}

export interface Intake extends IntakeSink {
  readonly counters: IntakeCounters;
}


export function createIntake(options: IntakeOptions): Intake {
  const { store, routes, parse, parsing } = options;
  const pollMs = options.backpressurePollMs ?? 100;
  const counters: IntakeCounters = { received: 0, parsed: 0, failed: 0, queued: 0, duplicates: 0 };

  async function waitForRoom(): Promise<void> {
    while (!options.signal?.aborted && (await store.outboxDepth()) >= options.maxOutbox) await sleep(pollMs, options.signal);
  }

  async function toOutbox(msg: Inbound, route: RouteConfig): Promise<OutboxInput> {
    const key = keyFor(msg.origin);
    const base = { route: route.name, key, origin: msg.origin, raw: msg.raw, ...(msg.afterDelivery === true ? { afterDelivery: true } : {}) };
    try {
      const userProperties = resolveUserProperties(route.user_properties, msg.origin);
      const result = await parse(msg.raw, { ...parsing, userProperties });
      counters.parsed++;
      return { ...base, commentId: result.comment.id, document: result.document, preview: result.comment, warnings: result.warnings };
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      counters.failed++;
      const commentId = createHash('sha256').update(msg.raw).digest('hex');
      return {
        ...base,
        commentId,
        document: { raw_email: { headers: { raw: '' }, body: { plain: '' } } },
        error: { code: err.code, message: err.message },
      };
    }
  }

  return {
    counters,
    async checkpoint(key: string) {
      return store.getCheckpoint(key);
    },
    async accept(batch: Inbound[], checkpoint?: Checkpoint): Promise<void> {
      if (batch.length === 0) {
        if (checkpoint) await store.setCheckpoint(checkpoint.key, checkpoint.value);
        return;
      }
      await waitForRoom();
      counters.received += batch.length;
      const items = await Promise.all(
        batch.map(async (msg) => {
          const route = routes.get(msg.route);
          if (!route) throw new Error(`intake: message for unknown route "${msg.route}"`);
          return withThread(await toOutbox(msg, route), route);
        }),
      );
      // The thread index entries are written in the enqueue transaction.
      const result = await store.enqueue(items, checkpoint);
      counters.queued += result.queued;
      counters.duplicates += result.duplicates;
      options.onBatch?.(batch[0]!.route, counters);
    },
  };
}

/** Adds the item's entry of the per-target thread index, so previews show thread properties across runs. */
function withThread(item: OutboxInput, route: RouteConfig): OutboxInput {
  const c = item.preview;
  if (!c || item.error || !c.thread_id) return item;
  const m = c.messages[0];
  const entry: ThreadEntry = { commentId: c.id, threadId: c.thread_id, timestamp: c.timestamp, participants: addressesOf(m) };
  if (m?.from) entry.from = m.from;
  return { ...item, thread: { source: routeTarget(route), entry } };
}
