/** Shared set-up of the Graph tests: a stand-in, an entry pointing at it, and an in-memory intake sink. */
import { afterEach, beforeEach } from 'vitest';
import { createLogger } from '../../src/logger.js';
import type { AcceptOptions, Accepted, Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';
import { graphEntrySchema, type GraphEntry } from '../../adapters/graph/config.js';
import { startGraphStandIn, type GraphStandIn } from '../../adapters/graph/stand-in/index.js';

export const SECRET = 'stand-in-secret';
export const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';

export const quiet = createLogger({ level: 'silent' });

/** A stand-in for each test, and the controller that stops what the test started (a test may replace it). */
export interface StandInPerTest<S> {
  standIn: S;
  stop: AbortController;
}

/** Starts a stand-in before each test of the calling file; after it, aborts `stop` and closes the stand-in. */
export function standInPerTest<S extends { close(): Promise<void> }>(start: () => Promise<S>): StandInPerTest<S> {
  const t = {} as StandInPerTest<S>;
  beforeEach(async () => {
    t.standIn = await start();
    t.stop = new AbortController();
  });
  afterEach(async () => {
    t.stop.abort();
    await t.standIn.close();
  });
  return t;
}

/** A Graph stand-in for each test of the calling file. */
export const graphStandInPerTest = (): StandInPerTest<GraphStandIn> => standInPerTest(() => startGraphStandIn());

export function entryFor(standIn: GraphStandIn, users: string[], more: Record<string, unknown> = {}): GraphEntry {
  return graphEntrySchema.parse({
    name: 'm365',
    route: 'support',
    tenant_id: standIn.tenantId,
    client_id: CLIENT_ID,
    auth: { client_secret: SECRET },
    authority_url: standIn.url,
    graph_url: standIn.graphUrl,
    mailboxes: users.map((user) => ({ user })),
    ...more,
  });
}

/** Stores what it is given by key (as intake does: one item per key) and the checkpoints. */
export class MemorySink implements Intake {
  readonly items = new Map<string, Inbound>();
  readonly checkpoints = new Map<string, Checkpoint['value']>();
  accepted = 0;
  /** Fails the next accept() calls (a store outage). */
  failNext = 0;

  async accept(batch: Inbound[], { checkpoint }: AcceptOptions = {}): Promise<Accepted[]> {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('store unavailable');
    }
    for (const b of batch) {
      this.accepted += 1;
      this.items.set(b.key, b);
    }
    if (checkpoint) this.checkpoints.set(checkpoint.key, checkpoint.value);
    return batch.map((b) => ({ id: b.key, duplicate: false }));
  }

  async item(): Promise<undefined> {
    return undefined;
  }

  async checkpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    return this.checkpoints.get(key);
  }
}

export async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A MemorySink that holds every write with messages once `holdFrom` messages are stored, until `release()`. */
export class HeldSink extends MemorySink {
  holdFrom = Number.POSITIVE_INFINITY;
  /** Writes waiting now. */
  waiting = 0;
  private opened: Promise<void> = new Promise(() => undefined);
  private open: () => void = () => undefined;

  constructor() {
    super();
    this.close();
  }

  /** Holds writes again from `n` more messages on. */
  holdAfter(n: number): void {
    this.holdFrom = this.accepted + n;
    this.close();
  }

  release(): void {
    this.holdFrom = Number.POSITIVE_INFINITY;
    this.open();
  }

  private close(): void {
    this.opened = new Promise((r) => (this.open = r));
  }

  override async accept(batch: Inbound[], options: AcceptOptions = {}): Promise<Accepted[]> {
    if (batch.length > 0 && this.accepted >= this.holdFrom) {
      this.waiting += 1;
      await this.opened;
      this.waiting -= 1;
    }
    return super.accept(batch, options);
  }
}
