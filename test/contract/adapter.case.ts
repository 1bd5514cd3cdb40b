/**
 * The adapter contract every kind passes (DESIGN.md "The flow", step 2), over a real SQLite store
 * and the real intake door:
 *
 * - pull: the checkpoint moves only with the durable write; a write under a stale fencing token
 *   is refused and writes nothing; a crash before the write leaves the messages to be read again;
 *   a restart resumes at the checkpoint. A kind that reads until stopped (a mailbox) is stopped
 *   once its source is read, or at once when the store refused its write (the crash).
 * - push: the sender's acknowledgement comes only after the write; a store outage or a full
 *   outbox gets the kind's retryable answer; a duplicate gets success and stores nothing.
 *
 * A kind joins with one case (adapters.test.ts); the case builds its adapter and, for push kinds,
 * sends one message the way its senders do.
 */
import { beforeEach, describe, expect, it } from 'vitest';
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
  /** Before each test: a new source holding `messages` messages (kinds whose source is a server). */
  reset?(): Promise<void>;
  /**
   * A kind that reads until stopped (IMAP, Graph, Gmail): adds one message to its source, which
   * a restart must read alone. Kinds without it read their source to the end and return.
   */
  more?(): Promise<void>;
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
    // Only a write carrying messages fails: a checkpoint written ahead of its messages would land.
    if (failing > 0 && args[0].length > 0) {
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

/** What a pull adapter handed the door in one run: the checkpoints it passed with messages, the inputs, the refusals. */
interface Recording extends Intake {
  checkpoints: string[];
  inputs: number;
  refused: unknown[];
  /** Called when the door refuses a write (a kind that reads until stopped is stopped there: the crash). */
  onRefused?: () => void;
}

function recordingIntake(intake: Intake, extra: Partial<AcceptOptions> = {}): Recording {
  const r: Recording = {
    checkpoints: [],
    inputs: 0,
    refused: [],
    accept: async (inputs: Inbound[], options: AcceptOptions = {}) => {
      // The checkpoints passed with messages, recorded before the write: a refused one must stay where it was.
      if (options.checkpoint && inputs.length > 0) r.checkpoints.push(options.checkpoint.key);
      r.inputs += inputs.length;
      try {
        return await intake.accept(inputs, { ...options, ...extra });
      } catch (err) {
        r.refused.push(err);
        r.onRefused?.();
        throw err;
      }
    },
    checkpoint: (key) => intake.checkpoint(key),
    item: (id) => intake.item(id),
  };
  return r;
}

/** Every folder of every mailbox of the adapter has had a complete pass (its checkpoint written with it). */
const readThrough = (adapter: Adapter): boolean =>
  (adapter.health?.() ?? []).every(
    (h) => h.folders !== undefined && h.folders.length > 0 && h.folders.every((f) => f.state === 'up_to_date'),
  );

/**
 * Runs a pull adapter: to the end of its source (or until it fails); one that reads until stopped
 * until the door holds `want` items and its folders are read through, or at once when the door refused a write. The adapter's own
 * failure, if it failed.
 */
async function runPull(adapter: Adapter, intake: Recording, c: PullCase, store: Store, want: number): Promise<unknown> {
  const stop = new AbortController();
  const running = adapter.start(intake, stop.signal).then(
    () => undefined,
    (err: unknown) => err,
  );
  if (c.more) {
    // Until the source is read (or the run failed or was refused); then stopped, as a process is.
    intake.onRefused = () => stop.abort();
    let settled = false;
    void running.finally(() => (settled = true));
    const deadline = Date.now() + 60_000;
    while (!settled && !stop.signal.aborted && ((await queued(store)) < want || !readThrough(adapter))) {
      if (Date.now() > deadline) throw new Error(`${c.kind}: ${want} items not stored within 60 s`);
      await new Promise((r) => setTimeout(r, 20));
    }
    stop.abort();
  }
  const err = await running;
  stop.abort();
  return err;
}

function pullContract(c: PullCase): void {
  if (c.reset) beforeEach(() => c.reset!());

  it('moves the checkpoint only with the durable write, and a crash before the write re-reads', async () => {
    const d = await door();
    try {
      d.failWrites(1);
      const first = recordingIntake(d.intake);
      const failed = await runPull(await c.build(), first, c, d.store, c.messages);
      // A kind that reads until stopped keeps its failure to itself (it would retry): the refusal is the door's.
      expect(c.more ? first.refused[0] : failed).toBeDefined();
      expect(first.checkpoints.length).toBeGreaterThan(0);
      expect(await queued(d.store)).toBe(0);
      for (const key of new Set(first.checkpoints)) expect(await d.intake.checkpoint(key)).toBeUndefined();

      const again = recordingIntake(d.intake);
      expect(await runPull(await c.build(), again, c, d.store, c.messages)).toBeUndefined();
      expect(again.refused).toEqual([]);
      expect(await queued(d.store)).toBe(c.messages);
      expect(again.checkpoints.length).toBeGreaterThan(0);
      for (const key of new Set(again.checkpoints)) expect(await d.intake.checkpoint(key)).toBeDefined();

      // A restart resumes at the checkpoint: it hands over only what is new (a mailbox's new message).
      await c.more?.();
      const third = recordingIntake(d.intake);
      expect(await runPull(await c.build(), third, c, d.store, c.messages + (c.more ? 1 : 0))).toBeUndefined();
      expect(third.inputs).toBe(c.more ? 1 : 0);
      expect(await queued(d.store)).toBe(c.messages + (c.more ? 1 : 0));
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
      const err = await runPull(await c.build(), fenced, c, d.store, c.messages);
      expect(isGatewayError(c.more ? fenced.refused[0] : err, 'MAILGATE_ERR_STORE_FENCED')).toBe(true);
      expect(fenced.checkpoints.length).toBeGreaterThan(0);
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
