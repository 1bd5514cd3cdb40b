/**
 * The adapter contract every kind passes (DESIGN.md "The flow", step 2), over a real SQLite store
 * and the real intake door:
 *
 * - pull: the checkpoint moves only with the durable write; a write under a stale fencing token
 *   is refused and writes nothing; a crash before the write leaves the messages to be read again.
 * - push: the sender's acknowledgement comes only after the write; a store outage or a full
 *   outbox gets the kind's retryable answer; a duplicate gets success and stores nothing.
 *
 * A kind joins with one case (adapters.test.ts); the case builds its adapter and, for push kinds,
 * sends one message the way its senders do.
 */
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { isGatewayError } from '../../src/errors.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import type { AcceptOptions, Adapter, Inbound, Intake } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

export const ROUTE = 'contract';
const config = ConfigSchema.parse({ routes: [{ name: ROUTE, source: 'acme/contract' }] });
const routes = new Map([[ROUTE, config.routes[0]!]]);
const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));

/** A message of the suite: distinct per `i`, with a Message-ID. */
export const message = (i: number): Buffer =>
  Buffer.from(
    `From: a@example.com\r\nTo: b@example.com\r\nSubject: contract ${i}\r\nMessage-ID: <contract-${i}@example.com>\r\n\r\nbody ${i}\r\n`,
  );

export interface PullCase {
  kind: string;
  mode: 'pull';
  /** How many messages its source holds. */
  messages: number;
  /** A fresh adapter over the same source (a restart reads the same messages). */
  build(): Promise<Adapter> | Adapter;
}

export interface PushCase {
  kind: string;
  mode: 'push';
  build(): Promise<Adapter> | Adapter;
  /** Sends `raw` as the kind's senders do; the answer's status (HTTP, or SMTP reply code). */
  send(adapter: Adapter, raw: Buffer): Promise<number>;
  /** The answers the kind's senders take as success, and as "retry later". */
  success(status: number): boolean;
  retryable: readonly number[];
}

export type KindCase = PullCase | PushCase;

/** An intake door over a real store whose writes can be made to fail or be watched. */
async function door(): Promise<{ store: Store; intake: Intake; failWrites(n: number): void; writes: number[] }> {
  const real = await openStore('sqlite::memory:');
  const store = Object.create(real) as Store;
  let failing = 0;
  const writes: number[] = [];
  store.enqueue = async (...args: Parameters<Store['enqueue']>) => {
    if (failing > 0) {
      failing--;
      throw new Error('the disk is gone');
    }
    const done = await real.enqueue(...args);
    writes.push(Date.now());
    return done;
  };
  store.close = () => real.close();
  const intake = createIntake({ store, routes, parse, parsing: {}, maxOutbox: 10_000 });
  return { store, intake, failWrites: (n) => (failing = n), writes };
}

const queued = async (store: Store) => (await store.outboxCounts()).reduce((n, c) => n + c.count, 0);

/** Runs a pull adapter to the end of its source (or until it fails). */
async function runPull(adapter: Adapter, intake: Intake): Promise<unknown> {
  const stop = new AbortController();
  try {
    await adapter.start(intake, stop.signal);
    return undefined;
  } catch (err) {
    return err;
  } finally {
    stop.abort();
  }
}

/** The checkpoints written with accepted messages, as the adapter passed them. */
function recordingIntake(intake: Intake, extra: Partial<AcceptOptions> = {}): Intake & { checkpoints: string[] } {
  const checkpoints: string[] = [];
  return {
    checkpoints,
    accept: async (inputs: Inbound[], options: AcceptOptions = {}) => {
      const accepted = await intake.accept(inputs, { ...options, ...extra });
      if (options.checkpoint) checkpoints.push(options.checkpoint.key);
      return accepted;
    },
    checkpoint: (key) => intake.checkpoint(key),
    item: (id) => intake.item(id),
  };
}

function pullContract(c: PullCase): void {
  it('moves the checkpoint only with the durable write, and a crash before the write re-reads', async () => {
    const d = await door();
    try {
      d.failWrites(1);
      const first = recordingIntake(d.intake);
      const failed = await runPull(await c.build(), first);
      expect(failed).toBeDefined();
      expect(await queued(d.store)).toBe(0);
      for (const key of new Set(first.checkpoints)) expect(await d.intake.checkpoint(key)).toBeUndefined();

      const again = recordingIntake(d.intake);
      expect(await runPull(await c.build(), again)).toBeUndefined();
      expect(await queued(d.store)).toBe(c.messages);
      expect(again.checkpoints.length).toBeGreaterThan(0);
      for (const key of new Set(again.checkpoints)) expect(await d.intake.checkpoint(key)).toBeDefined();

      // A third run resumes at the checkpoint: nothing new is stored.
      expect(await runPull(await c.build(), d.intake)).toBeUndefined();
      expect(await queued(d.store)).toBe(c.messages);
    } finally {
      await d.store.close();
    }
  });

  it('writes nothing under a stale fencing token', async () => {
    const d = await door();
    try {
      const lease = `${c.kind}:contract`;
      for (const id of ['old', 'new']) await d.store.registerOwner({ id, host: 'h', pid: 1, heartbeatMs: 60_000 });
      const old = (await d.store.acquireLease(lease, 'old', 60_000))!;
      await d.store.releaseLease(lease, 'old');
      await d.store.acquireLease(lease, 'new', 60_000);
      const fenced = recordingIntake(d.intake, { fence: { lease, owner: 'old', token: old.token } });
      const err = await runPull(await c.build(), fenced);
      expect(isGatewayError(err, 'MAILGATE_ERR_STORE_FENCED')).toBe(true);
      expect(await queued(d.store)).toBe(0);
      for (const key of new Set(fenced.checkpoints)) expect(await d.intake.checkpoint(key)).toBeUndefined();
    } finally {
      await d.store.close();
    }
  });
}

function pushContract(c: PushCase): void {
  /** A push adapter started on the door, as the runtime starts it. */
  const started = async (intake: Intake): Promise<{ adapter: Adapter; stop(): void }> => {
    const adapter = await c.build();
    const stop = new AbortController();
    void adapter.start(intake, stop.signal);
    await new Promise((r) => setImmediate(r));
    return { adapter, stop: () => stop.abort() };
  };

  it('acknowledges only after the write', async () => {
    const d = await door();
    let durableAt = 0;
    const watched: Intake = {
      ...d.intake,
      accept: async (inputs, options) => {
        const accepted = await d.intake.accept(inputs, options);
        durableAt = performance.now();
        return accepted;
      },
      checkpoint: (key) => d.intake.checkpoint(key),
      item: (id) => d.intake.item(id),
    };
    const a = await started(watched);
    try {
      const status = await c.send(a.adapter, message(1));
      const answeredAt = performance.now();
      expect(c.success(status)).toBe(true);
      expect(durableAt).toBeGreaterThan(0);
      expect(answeredAt).toBeGreaterThanOrEqual(durableAt);
      expect(await queued(d.store)).toBe(1);
    } finally {
      a.stop();
      await d.store.close();
    }
  });

  it('answers a store outage and a full outbox with its retryable answer, storing nothing', async () => {
    const d = await door();
    const a = await started(d.intake);
    try {
      d.failWrites(1);
      expect(c.retryable).toContain(await c.send(a.adapter, message(2)));
      expect(await queued(d.store)).toBe(0);
    } finally {
      a.stop();
      await d.store.close();
    }
    const real = await openStore('sqlite::memory:');
    const full = createIntake({ store: real, routes, parse, parsing: {}, maxOutbox: 1 });
    await full.accept([
      {
        raw: message(3),
        key: 'contract:3',
        origin: { adapter: 'contract', instance: '', id: '3', details: {} },
        route: ROUTE,
        receivedAt: new Date(),
      },
    ]);
    const b = await started(full);
    try {
      expect(c.retryable).toContain(await c.send(b.adapter, message(4)));
      expect(await queued(real)).toBe(1);
    } finally {
      b.stop();
      await real.close();
    }
  });

  it('answers a duplicate with success and stores nothing', async () => {
    const d = await door();
    const a = await started(d.intake);
    try {
      expect(c.success(await c.send(a.adapter, message(5)))).toBe(true);
      expect(c.success(await c.send(a.adapter, message(5)))).toBe(true);
      expect(await queued(d.store)).toBe(1);
    } finally {
      a.stop();
      await d.store.close();
    }
  });
}

/** The adapter contract for one kind. */
export function adapterContract(c: KindCase): void {
  describe(`adapter contract: ${c.kind} (${c.mode})`, () => (c.mode === 'pull' ? pullContract(c) : pushContract(c)));
}
