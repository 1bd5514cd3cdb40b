/**
 * The SQLite store with its writes on a writer thread (`SqliteOptions.writerThread`, what
 * `mailgate import` opens): the whole store contract, and the same rows as the event loop's own
 * connection writes for the same calls. The thread runs compiled code, so the store comes from
 * dist/ (`npm test` builds first); its errors are turned back into this build's GatewayError,
 * which the contract's checks recognise by class.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError, type ErrorCode } from '../../src/errors.js';
import type { OpenStoreOptions } from '../../src/store/index.js';
import type { OutboxInput, Store } from '../../src/store/types.js';
import { requireBuild, ROOT } from '../cli/support/dist.js';
import { fakeClock, input, storeContract } from '../contract/store.case.js';

requireBuild();
const dist = (await import(pathToFileURL(join(ROOT, 'dist/src/store/index.js')).href)) as typeof import('../../src/store/index.js');

const dir = mkdtempSync(join(tmpdir(), 'mailgate-sqlite-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = (): string => join(dir, `store-${(n += 1)}.db`);

/** `store` with the compiled build's GatewayErrors rethrown as this build's (same code and message). */
function withOwnErrors(store: Store): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          const e = err as { name?: string; code?: string; message?: string };
          throw e?.name === 'GatewayError' ? new GatewayError(e.code as ErrorCode, e.message ?? '', { cause: err }) : err;
        });
      };
    },
  });
}

const openWithWriter = async (path: string, options: OpenStoreOptions = {}): Promise<Store> =>
  withOwnErrors(await dist.openStore(`sqlite:${path}`, { ...options, sqlite: { writerThread: true } }));

storeContract('sqlite, writes on a writer thread', async () => {
  const path = freshPath();
  return { open: (options) => openWithWriter(path, options) };
});

/** Every row of every table, in rowid order (sqlite_sequence included; not the migrations, stamped by the wall clock). */
function dump(path: string): Record<string, unknown[]> {
  const db = new Database(path, { readonly: true });
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'schema_migrations' ORDER BY name`)
      .all() as Array<{ name: string }>;
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]));
  } finally {
    db.close();
  }
}

/** The writes an import makes, and a few more, in one order, on a fresh store. */
async function script(store: Store, clock: ReturnType<typeof fakeClock>, inputs: OutboxInput[][]): Promise<unknown[]> {
  const seen: unknown[] = [];
  await store.registerOwner({ id: 'o1', host: 'h', pid: 1, heartbeatMs: 1000 });
  seen.push(await store.beginParseAttempts('r', ['files:/tmp/archive.mbox:1', 'files:/tmp/archive.mbox:2']));
  seen.push(await store.enqueue(inputs[0]!, { key: 'files:r', value: { path: '/tmp/archive.mbox', offset: 10 } }));
  await store.clearParseAttempts('r', ['files:/tmp/archive.mbox:1']);
  clock.advance(5);
  seen.push(await store.enqueue(inputs[1]!, { key: 'files:r', value: { path: '/tmp/archive.mbox', offset: 20 } }));
  const claimed = await store.claim('r', 3, 'o1', 60_000);
  seen.push(claimed.map((i) => [i.id, i.key, i.commentId, i.documentJson, i.hashes]));
  clock.advance(5);
  const ledger = [
    {
      source: 'acme/mail',
      entries: claimed.map((i) => ({
        commentId: i.commentId,
        textHash: 't',
        docHash: 'd',
        outcome: 'delivered' as const,
        updatedAt: '2024-01-01T00:00:00.000Z',
      })),
    },
  ];
  seen.push(
    await store.markDelivered([claimed[0]!.id, claimed[1]!.id], { outcome: 'delivered', aiUnits: { route: 'r', units: 2 }, ledger }),
  );
  seen.push(await store.scheduleRetry(claimed[2]!.id, 1000, { code: 'MAILGATE_ERR_API_UNAVAILABLE', message: '503' }));
  seen.push(await store.deadLetter(claimed[2]!.id, { code: 'MAILGATE_ERR_API_REJECTED', message: '422' }));
  await store.heartbeatOwner('o1');
  seen.push(await store.deregisterOwner('o1'));
  return seen;
}

describe('SQLite writer thread', () => {
  it('writes the same rows, and answers the same, as the event loop connection for the same calls', async () => {
    const thread = {
      source: 'acme/mail',
      entry: { commentId: 'c0de0001', threadId: 't1', timestamp: '2024-01-01T00:00:00.000Z', participants: ['a@example.com'] },
    };
    const inputs = [
      [
        input('r', 1, { thread, aliases: ['webhook:x:1'], warnings: [{ code: 'MAILGATE_WARN_BODY_TRUNCATED', message: 'cut' }] }),
        input('r', 2),
        input('r', 2),
        input('r', 3, { error: { code: 'MAILGATE_ERR_MIME_TIMEOUT', message: 'slow' }, afterDelivery: true }),
      ],
      [input('r', 4, { aliases: ['webhook:x:1'] }), input('r', 5, { thread }), input('r', 6), input('r2', 1)],
    ];
    const paths = [freshPath(), freshPath()];
    const answers: unknown[] = [];
    for (const [i, path] of paths.entries()) {
      const clock = fakeClock(1_700_000_000_000);
      const store = i === 0 ? await openWithWriter(path, { now: clock.now }) : await dist.openStore(`sqlite:${path}`, { now: clock.now });
      answers.push(await script(store, clock, inputs));
      await store.close();
    }
    expect(answers[0]).toEqual(answers[1]);
    const [viaThread, direct] = paths.map(dump);
    // Six items: the fourth input of each call is a duplicate (of a key, of an alias).
    expect(viaThread!['outbox']).toHaveLength(6);
    expect(viaThread!['outbox_raw']!.length).toBeGreaterThan(0);
    expect(viaThread).toEqual(direct);
  });

  it('answers a fence refused on the thread with its code, and writes nothing of the call', async () => {
    const path = freshPath();
    const store = await openWithWriter(path);
    const lease = await store.acquireLease('mbx', 'o1', 60_000);
    expect(lease).toBeDefined();
    const stale = { lease: 'mbx', owner: 'o1', token: lease!.token + 1 };
    const err = await store.enqueue([input('r', 1)], undefined, stale).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect((err as GatewayError).code).toBe('MAILGATE_ERR_STORE_FENCED');
    expect(await store.outboxDepth('r')).toBe(0);
    await store.close();
  });
});
