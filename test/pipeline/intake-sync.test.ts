/**
 * Intake over a SQLite store whose commits sync the WAL on the thread pool (`syncOffThread`,
 * what `mailgate import` opens): a batch's transaction is written under synchronous=NORMAL and
 * acknowledged only once an fdatasync started after it has returned. Here the fdatasync is held
 * by the test, so a batch acknowledged early, a later checkpoint written ahead of an earlier
 * batch's sync, or an item claimed for delivery before its sync, would show.
 */
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileOrigin } from '../../adapters/files/identity.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import type { Checkpoint, Inbound } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/sync' }] });
const routes = new Map([['r', config.routes[0]!]]);
const raw = (i: number) => Buffer.from(`From: a@x.com\r\nSubject: s${i}\r\nMessage-ID: <w${i}@x.com>\r\n\r\nbody ${i}\r\n`);
const batch = (from: number, n: number): Inbound[] =>
  Array.from({ length: n }, (_, k) => ({
    raw: raw(from + k),
    key: `files:/w.mbox:${from + k}`,
    origin: fileOrigin('/w.mbox', from + k),
    route: 'r',
    receivedAt: new Date(),
  }));
const checkpoint = (index: number): Checkpoint => ({ key: 'files:/w.mbox', value: { index } });
const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));
const tick = (ms = 50) => new Promise((r) => setTimeout(r, ms));

type Done = (err: NodeJS.ErrnoException | null) => void;

/** The store's WAL syncs, held until the test lets them run (or fails them). */
class HeldSyncs {
  readonly held: Array<{ fd: number; done: Done }> = [];
  count = 0;
  sync = (fd: number, done: Done): void => {
    this.count += 1;
    this.held.push({ fd, done });
  };
  /** Runs the held syncs for real, in order. */
  release(): void {
    for (const { fd, done } of this.held.splice(0)) fdatasync(fd, done);
  }
  fail(): void {
    const err = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5 });
    for (const { done } of this.held.splice(0)) done(err);
  }
  async waitHeld(n: number): Promise<void> {
    for (let i = 0; i < 200 && this.held.length < n; i++) await tick(10);
    expect(this.held.length).toBe(n);
  }
}

let dir: string;
let store: Store;
let syncs: HeldSyncs;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-intake-sync-'));
  syncs = new HeldSyncs();
  store = await openStore(`sqlite:${join(dir, 's.db')}`, { sqlite: { syncOffThread: true, syncFile: syncs.sync } });
});
afterEach(async () => {
  syncs.release();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Settles to 'pending' while `p` has not settled. */
const state = (p: Promise<unknown>): Promise<string> =>
  Promise.race([
    p.then(
      () => 'resolved',
      () => 'rejected',
    ),
    tick(0).then(() => 'pending'),
  ]);

describe('intake over commits synced off the event loop', () => {
  it('acknowledges a batch, and writes the next batch and its checkpoint, only once the sync covering it has returned', async () => {
    const intake = createIntake({ store, routes, parse, parsing: {}, maxOutbox: 10_000 });
    const first = intake.accept(batch(0, 10), { checkpoint: checkpoint(10) });
    const second = intake.accept(batch(10, 10), { checkpoint: checkpoint(20) });
    await syncs.waitHeld(1);
    // The first batch is committed (this process sees it) but not on disk: not acknowledged, and
    // the second one waits behind it, however long the disk takes.
    await tick(200);
    expect(await state(first)).toBe('pending');
    expect(await state(second)).toBe('pending');
    expect(syncs.held).toHaveLength(1);
    expect(await store.getCheckpoint('files:/w.mbox')).toEqual({ index: 10 });
    syncs.release();
    expect((await first).every((a) => !a.duplicate)).toBe(true);
    await syncs.waitHeld(1);
    expect(await store.getCheckpoint('files:/w.mbox')).toEqual({ index: 20 });
    expect(await state(second)).toBe('pending');
    syncs.release();
    expect(await second).toHaveLength(10);
    expect(syncs.count).toBe(2);
  });

  it('claims nothing for delivery before the sync of the claim, which covers the enqueue, has returned', async () => {
    const enqueued = store.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
    await syncs.waitHeld(1);
    const claimed = store.claim('r', 10, 'w', 60_000);
    await syncs.waitHeld(2);
    expect(await state(claimed)).toBe('pending');
    syncs.release();
    expect((await enqueued).queued).toBe(3);
    expect(await claimed).toHaveLength(3);
    // A claim that finds nothing writes nothing, and waits for no disk.
    expect(await store.claim('r', 10, 'w', 60_000)).toEqual([]);
    expect(syncs.count).toBe(2);
  });

  it('claims items whose enqueue is already synced without waiting for a sync of its own', async () => {
    const enqueued = store.enqueue([input('r', 1), input('r', 2)]);
    await syncs.waitHeld(1);
    syncs.release();
    expect((await enqueued).queued).toBe(2);
    // Every enqueue before the claim is on disk: the claim answers at once, held syncs or not.
    expect(await store.claim('r', 10, 'w', 60_000)).toHaveLength(2);
    expect(syncs.count).toBe(1);
    // An enqueue whose sync is still held makes the next claim wait for one again.
    const more = store.enqueue([input('r', 3)]);
    await syncs.waitHeld(1);
    const claimed = store.claim('r', 10, 'w', 60_000);
    await syncs.waitHeld(2);
    expect(await state(claimed)).toBe('pending');
    syncs.release();
    await more;
    expect(await claimed).toHaveLength(1);
    expect(syncs.count).toBe(3);
  });

  it('fails a batch whose sync failed, and every batch after it, writing nothing more', async () => {
    const intake = createIntake({ store, routes, parse, parsing: {}, maxOutbox: 10_000 });
    const first = intake.accept(batch(0, 10), { checkpoint: checkpoint(10) });
    const second = intake.accept(batch(10, 10), { checkpoint: checkpoint(20) });
    await syncs.waitHeld(1);
    syncs.fail();
    await expect(first).rejects.toThrow(/EIO/);
    await expect(second).rejects.toThrow();
    // An adapter starting again from its checkpoint is refused too: the disk could not vouch for
    // what this process sees, so nothing more is written or acknowledged until the store is reopened.
    await expect(intake.accept(batch(10, 10), { checkpoint: checkpoint(20) })).rejects.toThrow(/EIO/);
    expect(await store.getCheckpoint('files:/w.mbox')).toEqual({ index: 10 });
    expect(syncs.count).toBe(1);
  });
});
