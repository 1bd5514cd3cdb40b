/**
 * The intake door's push calls (`whenFull: 'refuse'`) against real stores (SQLite files and PostgreSQL) and the real parse pool. The
 * pipeline runs as compiled (dist/: `npm run build` first), because the pool's workers do and
 * errors are told apart by class: durability before the answer, group commit, idempotency on
 * the bytes and on the provider's event id (also across a restart, delivery and concurrent
 * writers), refusals that store nothing, dead letters, envelope properties, item states.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigSchema, type RouteConfig } from '../../src/config/schema.js';
import { createLogger } from '../../src/logger.js';
import type { IntakeOptions } from '../../src/pipeline/intake.js';
import { contentKey, eventAlias, outboxKey } from '../../src/pipeline/origin.js';
import type { ParsePool } from '../../src/pipeline/pool.js';
import type { Accepted, Inbound, PushItemState } from '../../src/pipeline/types.js';
import type { OutboxInput, Store } from '../../src/store/types.js';
import { ROOT, importPool, requireBuild } from '../cli/support/dist.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

const config = ConfigSchema.parse({
  routes: [
    {
      name: 'hooks',
      source: 'acme/support',
      user_properties: {
        'string:Recipient': '{envelope.to}',
        'string:Provider': '{envelope.provider}',
        'string:SPF': '{envelope.spf}',
        'string:Event': '{eventId}',
        'string:Relay': '{envelope.remoteAddress}',
        'string:DMARC': '{envelope.dmarc}',
      },
    },
  ],
});
const route = config.routes[0]!;
const routes = new Map<string, RouteConfig>([[route.name, route]]);

const mail = (n: number, body = `body ${n}`): Buffer =>
  Buffer.from(
    `From: Sender <s${n}@example.com>\r\nTo: support@acme.example\r\nSubject: push ${n}\r\nMessage-ID: <push-${n}@example.com>\r\n` +
      `Date: Mon, 04 Mar 2024 09:00:00 +0000\r\n\r\n${body}\r\n`,
  );

function pushed(raw: Buffer, eventId?: string): Inbound {
  const envelope = {
    from: 's@example.com',
    to: ['support@acme.example', 'team@acme.example'],
    provider: 'mailgun',
    spf: 'pass',
    remoteAddress: '203.0.113.9',
  };
  const origin = {
    adapter: 'webhook:mailgun',
    instance: 'in',
    id: eventId ?? contentKey(raw),
    envelope,
    details: eventId ? { eventId } : {},
  };
  const alias = eventAlias('webhook:mailgun', 'in', eventId);
  return {
    raw,
    key: contentKey(raw),
    ...(alias === undefined ? {} : { alias }),
    route: 'hooks',
    receivedAt: new Date('2024-03-04T09:00:01Z'),
    origin,
  };
}

async function codeOf(p: Promise<unknown>): Promise<unknown> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  return isGatewayError(err) ? err.code : err;
}

async function dist<T>(path: string): Promise<T> {
  requireBuild();
  return (await import(pathToFileURL(join(ROOT, 'dist', path)).href)) as T;
}

let pool: ParsePool;
let createIntake: typeof import('../../src/pipeline/intake.js').createIntake;
let openStore: typeof import('../../src/store/index.js').openStore;
let isGatewayError: typeof import('../../src/errors.js').isGatewayError;
const dir = mkdtempSync(join(tmpdir(), 'mailgate-push-'));
beforeAll(async () => {
  const { ParsePool: Pool } = await importPool();
  pool = new Pool({ size: 1 });
  ({ createIntake } = await dist<typeof import('../../src/pipeline/intake.js')>('src/pipeline/intake.js'));
  ({ openStore } = await dist<typeof import('../../src/store/index.js')>('src/store/index.js'));
  ({ isGatewayError } = await dist<typeof import('../../src/errors.js')>('src/errors.js'));
});
afterAll(async () => {
  await pool.close();
  await stopTestServer();
  rmSync(dir, { recursive: true, force: true });
});

const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
});

/** A push sender's view of the door: `accept` with `whenFull: 'refuse'`. */
interface PushDoor {
  submit(batch: Inbound[], signal?: AbortSignal): Promise<Accepted[]>;
  item(id: string): Promise<PushItemState | undefined>;
}

function doorFor(store: Store, options: Partial<IntakeOptions> = {}): PushDoor {
  const intake = createIntake({ store, routes, parse: (raw, o) => pool.parseEncoded(raw, o), parsing: {}, maxOutbox: 1_000, ...options });
  return {
    submit: (batch, signal) => intake.accept(batch, { whenFull: 'refuse', ...(signal ? { signal } : {}) }),
    item: (id) => intake.item(id),
  };
}

/** A door that counts the messages it has finished parsing. */
function countingDoor(store: Store): { sink: PushDoor; prepared: () => number } {
  let prepared = 0;
  const parse: IntakeOptions['parse'] = async (raw, o) => {
    const out = await pool.parseEncoded(raw, o);
    prepared += 1;
    return out;
  };
  return { sink: doorFor(store, { parse, logger: createLogger(false) }), prepared: () => prepared };
}

function sinkFor(store: Store, maxOutbox = 1_000): PushDoor {
  return doorFor(store, { maxOutbox, logger: createLogger(false) });
}

/** The exact bytes stored for an item (read back as a dead letter, the one place the contract returns them). */
async function rawOf(store: Store, id: string): Promise<Buffer | undefined> {
  await store.deadLetter(Number(id), { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'read back' });
  return (await store.getDeadLetter(Number(id)))?.raw;
}

/** A store whose enqueue waits for `release()` the first time (the others pass). */
function gated(store: Store): { store: Store; calls: OutboxInput[][]; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const calls: OutboxInput[][] = [];
  const wrapped = Object.create(store) as Store;
  wrapped.enqueue = async (items, checkpoint, fence) => {
    calls.push(items);
    if (calls.length === 1) await gate;
    return store.enqueue(items, checkpoint, fence);
  };
  return { store: wrapped, calls, release };
}

let n = 0;
const kinds: Array<[string, () => Promise<string>]> = [
  ['sqlite', async () => `sqlite:${join(dir, `store-${(n += 1)}.db`)}`],
  ['postgres', () => createTestDatabase('mailgate_push')],
];

describe.each(kinds)('push sink on %s', (_kind, newUrl) => {
  let url: string;
  async function open(): Promise<Store> {
    const s = await openStore(url);
    stores.push(s);
    return s;
  }
  async function fresh(): Promise<Store> {
    url = await newUrl();
    return open();
  }

  it('resolves once the exact bytes are durable, and answers the first item again after a restart', async () => {
    const store = await fresh();
    const raw = mail(1);
    const [result] = await sinkFor(store).submit([pushed(raw, 'ev-1')]);
    expect(result).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), duplicate: false });
    // Another connection sees the committed item at once.
    const other = await open();
    expect(await other.itemState(Number(result!.id))).toMatchObject({ status: 'queued', key: outboxKey(route, contentKey(raw)) });
    // A restart between the write and the answer: the sender's retry meets the first item.
    await store.close();
    const restarted = await open();
    const again = await sinkFor(restarted).submit([pushed(raw, 'ev-1')]);
    expect(again).toEqual([{ id: result!.id, duplicate: true }]);
    expect(await restarted.outboxDepth('hooks')).toBe(1);
    expect((await rawOf(restarted, result!.id))?.equals(raw)).toBe(true);
  });

  it('lets concurrent submits share one commit', async () => {
    const g = gated(await fresh());
    const { sink, prepared } = countingDoor(g.store);
    const first = sink.submit([pushed(mail(0))]);
    await vi.waitFor(() => expect(g.calls).toHaveLength(1));
    // While the first commit holds the store, 20 more submits are parsed and wait.
    const rest = Array.from({ length: 20 }, (_, i) => sink.submit([pushed(mail(i + 1))]));
    await vi.waitFor(() => expect(prepared()).toBe(21));
    g.release();
    const results = [await first, ...(await Promise.all(rest))].flat();
    expect(g.calls.map((c) => c.length)).toEqual([1, 20]);
    expect(new Set(results.map((r) => r.id)).size).toBe(21);
    expect(results.every((r) => !r.duplicate)).toBe(true);
    expect(await g.store.outboxDepth('hooks')).toBe(21);
  });

  it('answers a retry with the same bytes or the same event id as a duplicate of the first item, storing nothing', async () => {
    const store = await fresh();
    const sink = sinkFor(store);
    const [first] = await sink.submit([pushed(mail(1), 'ev-1')]);
    expect(await sink.submit([pushed(mail(1), 'ev-other')])).toEqual([{ id: first!.id, duplicate: true }]);
    expect(await sink.submit([pushed(mail(1))])).toEqual([{ id: first!.id, duplicate: true }]);
    // The provider re-encoded its retry: other bytes, same event id.
    expect(await sink.submit([pushed(mail(1, 'body 1 re-encoded'), 'ev-1')])).toEqual([{ id: first!.id, duplicate: true, conflict: true }]);
    expect(await store.outboxDepth('hooks')).toBe(1);
    expect((await store.counters('hooks'))[0]?.enqueued).toBe(1);
    // Delivered, raw bytes dropped: still the same item.
    const [claimed] = await store.claim('hooks', 10, 'w', 60_000);
    await store.markDelivered([claimed!.id], { outcome: 'delivered' });
    expect(await sink.submit([pushed(mail(1), 'ev-1')])).toEqual([{ id: first!.id, duplicate: true }]);
    expect((await store.outboxCounts()).map((c) => [c.status, c.count])).toEqual([['delivered', 1]]);
  });

  it('looks no key up before committing messages without an event id while the route has room, and still answers a resend as a duplicate', async () => {
    const store = await fresh();
    const looked: string[][] = [];
    const counted = Object.create(store) as Store;
    counted.findKeys = (r, keys) => (looked.push(keys), store.findKeys(r, keys));
    const sink = sinkFor(counted);
    const [first] = await sink.submit([pushed(mail(1))]);
    expect(await sink.submit([pushed(mail(1))])).toEqual([{ id: first!.id, duplicate: true }]);
    expect(await sink.submit([pushed(mail(2)), pushed(mail(1))])).toEqual([
      { id: expect.not.stringMatching(`^${first!.id}$`), duplicate: false },
      { id: first!.id, duplicate: true },
    ]);
    expect(looked).toEqual([]);
    expect(await store.outboxDepth('hooks')).toBe(2);
    expect((await store.counters('hooks'))[0]?.enqueued).toBe(2);
    // A message with an event id is looked up: a resend under another id must not add that id to the item.
    await sink.submit([pushed(mail(3), 'ev-3')]);
    expect(looked).toHaveLength(1);
  });

  it('stores one item for identical submits in flight at once, in one process and across two', async () => {
    const store = await fresh();
    const sink = sinkFor(store);
    const same = await Promise.all([sink.submit([pushed(mail(1), 'ev-1')]), sink.submit([pushed(mail(1), 'ev-1')])]);
    expect(same[0]![0]!.id).toBe(same[1]![0]!.id);
    expect(same.flat().filter((r) => r.duplicate)).toHaveLength(1);
    const replica = sinkFor(await open());
    const messages = Array.from({ length: 30 }, (_, i) => pushed(mail(i + 10), `ev-${i + 10}`));
    const [a, b] = await Promise.all([sink.submit(messages), replica.submit([...messages].reverse())]);
    expect(a!.map((r) => r.id)).toEqual([...b!].reverse().map((r) => r.id));
    expect(await store.outboxDepth('hooks')).toBe(31);
  });

  it('refuses with INTAKE_UNAVAILABLE and stores nothing when the store fails', async () => {
    const store = await fresh();
    // The transaction fails after writing the first messages of the submit: all roll back.
    const failing = Object.create(store) as Store;
    const poison = (it: OutboxInput): OutboxInput => ({ ...it, key: 'poison', aliases: [], commentId: null as unknown as string });
    failing.enqueue = (items) => store.enqueue([...items, poison(items[0]!)]);
    const batch = [pushed(mail(1), 'ev-1'), pushed(mail(2), 'ev-2')];
    expect(await codeOf(sinkFor(failing).submit(batch))).toBe('MAILGATE_ERR_INTAKE_UNAVAILABLE');
    expect(await store.outboxDepth()).toBe(0);
    expect(
      (
        await store.findKeys(
          'hooks',
          batch.map((m) => outboxKey(route, m.key)),
        )
      ).size,
    ).toBe(0);
    // The same submit later succeeds as new messages.
    expect((await sinkFor(store).submit(batch)).map((r) => r.duplicate)).toEqual([false, false]);
    const closed = await open();
    await closed.close();
    expect(await codeOf(sinkFor(closed).submit([pushed(mail(3))]))).toBe('MAILGATE_ERR_INTAKE_UNAVAILABLE');
  });

  it('fails only the submit the store refuses when it shared a commit with others', async () => {
    const g = gated(await fresh());
    const poisoned = Object.create(g.store) as Store;
    const poison = (it: OutboxInput): OutboxInput => (it.raw?.includes('POISON') ? { ...it, commentId: null as unknown as string } : it);
    poisoned.enqueue = (items, checkpoint, fence) => g.store.enqueue(items.map(poison), checkpoint, fence);
    const { sink, prepared } = countingDoor(poisoned);
    const first = sink.submit([pushed(mail(0))]);
    await vi.waitFor(() => expect(g.calls).toHaveLength(1));
    const bad = sink.submit([pushed(mail(1, 'POISON'))]);
    const good = sink.submit([pushed(mail(2))]);
    await vi.waitFor(() => expect(prepared()).toBe(3));
    g.release();
    await first;
    expect(await codeOf(bad)).toBe('MAILGATE_ERR_INTAKE_UNAVAILABLE');
    expect((await good)[0]?.duplicate).toBe(false);
    expect(await g.store.outboxDepth('hooks')).toBe(2);
    expect(g.calls.map((c) => c.length)).toEqual([1, 2, 1, 1]);
  });

  it('refuses a submit whole with INTAKE_OUTBOX_FULL when the route would go over its limit, but answers duplicates', async () => {
    const store = await fresh();
    const sink = sinkFor(store, 3);
    const [one] = await sink.submit([pushed(mail(1), 'ev-1'), pushed(mail(2), 'ev-2')]);
    expect(await codeOf(sink.submit([pushed(mail(3)), pushed(mail(4))]))).toBe('MAILGATE_ERR_INTAKE_OUTBOX_FULL');
    expect(await store.outboxDepth('hooks')).toBe(2);
    await sink.submit([pushed(mail(3))]);
    expect(await codeOf(sink.submit([pushed(mail(4))]))).toBe('MAILGATE_ERR_INTAKE_OUTBOX_FULL');
    expect(await sink.submit([pushed(mail(1, 'other bytes'), 'ev-1')])).toEqual([{ id: one!.id, duplicate: true, conflict: true }]);
    // Delivery makes room again.
    const claimed = await store.claim('hooks', 1, 'w', 60_000);
    await store.markDelivered(
      claimed.map((c) => c.id),
      { outcome: 'delivered' },
    );
    expect((await sink.submit([pushed(mail(4))]))[0]?.duplicate).toBe(false);
  });

  it('stores unparseable and unreadable messages as dead letters with their bytes', async () => {
    const store = await fresh();
    const sink = sinkFor(store);
    const notMail = Buffer.from('\u0000\u0001 not a message at all');
    const failure = { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED', message: 'truncated' };
    const unreadable: Inbound = { ...pushed(Buffer.from('partial')), failure };
    const results = await sink.submit([pushed(notMail, 'ev-bad'), unreadable, pushed(mail(1))]);
    expect(results[0]?.dead?.code).toMatch(/^MAILGATE_ERR_MIME_/);
    expect(results[1]).toMatchObject({ duplicate: false, dead: { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED', message: 'truncated' } });
    expect(results[2]?.dead).toBeUndefined();
    expect((await store.getDeadLetter(Number(results[0]!.id)))?.raw?.equals(notMail)).toBe(true);
    expect(await sink.item(results[0]!.id)).toMatchObject({ state: 'dead', error: { code: results[0]!.dead!.code } });
    expect(await sink.submit([pushed(notMail, 'ev-bad')])).toEqual([{ id: results[0]!.id, duplicate: true }]);
  });

  it('keeps the envelope with the item and fills route properties from it', async () => {
    const store = await fresh();
    const [r] = await sinkFor(store).submit([pushed(mail(1), 'ev-42')]);
    const item = await store.getItem(Number(r!.id));
    expect(item?.origin.envelope).toEqual(pushed(mail(1)).origin.envelope);
    expect(item?.document.user_properties).toEqual({
      'string:Recipient': 'support@acme.example,team@acme.example',
      'string:Provider': 'mailgun',
      'string:SPF': 'pass',
      'string:Event': 'ev-42',
      'string:Relay': '203.0.113.9',
    });
  });

  it('tells the state of an item: queued, retrying, delivered, dead', async () => {
    const store = await fresh();
    const sink = sinkFor(store);
    const [q, r, d, x] = await sink.submit([1, 2, 3, 4].map((i) => pushed(mail(i))));
    expect(await sink.item(q!.id)).toEqual({ id: q!.id, route: 'hooks', state: 'queued', commentId: expect.any(String), attempts: 0 });
    await store.claim('hooks', 10, 'w', 60_000);
    await store.scheduleRetry([Number(r!.id)], 60_000, { code: 'MAILGATE_ERR_API_SERVER', message: '503' });
    await store.markDelivered([Number(d!.id)], { outcome: 'delivered' });
    await store.deadLetter(Number(x!.id), { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: header too long' });
    expect(await sink.item(r!.id)).toMatchObject({ state: 'retrying', attempts: 1, nextAttemptAt: expect.stringMatching(/^\d{4}-/) });
    expect(await sink.item(d!.id)).toMatchObject({ state: 'delivered' });
    const dead = await sink.item(x!.id);
    expect(dead).toMatchObject({ state: 'dead', error: { code: 'MAILGATE_ERR_BATCH_REJECTED', message: '422: header too long' } });
    for (const id of ['999999', '0', 'abc', '1e3', '']) expect(await sink.item(id)).toBeUndefined();
  });
});

describe('push keys', () => {
  it('keys pushed messages by the SHA-256 of their bytes and their event id per target', () => {
    const raw = mail(1);
    expect(contentKey(raw)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(pushed(raw, 'ev-1').key).toBe(contentKey(raw));
    expect(outboxKey(route, contentKey(raw))).toBe(`${contentKey(raw)}|acme/support`);
    expect(outboxKey(route, pushed(raw, 'ev-1').alias!)).toBe('webhook:mailgun:in:event:ev-1|acme/support');
    expect(pushed(raw).alias).toBeUndefined();
    expect(eventAlias('upload', 'desk', '')).toBeUndefined();
    expect(eventAlias('upload', 'desk', undefined)).toBeUndefined();
  });
});
