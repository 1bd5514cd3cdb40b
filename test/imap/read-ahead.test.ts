/**
 * A folder pass reads ahead while intake parses and stores: slices are handed over before the
 * earlier ones are durable — past the end of a fetch chunk — but never more than
 * MAX_SLICES_IN_FLIGHT of them, nor more than `batch_bytes` of sources beyond the newest; the
 * checkpoint moves only with the durable write of the slice that covers it, in UID order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointKey } from '../../adapters/imap/index.js';
import { MAX_SLICES_IN_FLIGHT } from '../../adapters/imap/in-flight.js';
import { FIRST_CHUNK_MESSAGES } from '../../adapters/imap/sync.js';
import type { AcceptOptions, Inbound } from '../../src/pipeline/types.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { MemorySink, eventually } from './memory-sink.js';
import { textMessage } from './messages.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

/** A sink whose first batch is held until released, counting what was handed over meanwhile. */
function heldSink(): { sink: MemorySink; calls: () => number; maxOutstanding: () => number; release: () => void } {
  const sink = new MemorySink();
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let first = true;
  sink.onAccept = async () => {
    if (!first) return;
    first = false;
    await gate;
  };
  let calls = 0;
  let outstanding = 0;
  let maxOutstanding = 0;
  const accept = sink.accept.bind(sink);
  sink.accept = (batch: Inbound[], options?: AcceptOptions) => {
    const bytes = batch.reduce((n, m) => n + m.raw.length, 0);
    calls += 1;
    outstanding += bytes;
    // Sources handed over and not yet durable, not counting the newest call.
    maxOutstanding = Math.max(maxOutstanding, outstanding - bytes);
    const done = accept(batch, options);
    void done.then(() => (outstanding -= bytes)).catch(() => undefined);
    return done;
  };
  return { sink, calls: () => calls, maxOutstanding: () => maxOutstanding, release };
}

const slow = { poll_interval_ms: 3_600_000, idle_watchdog_ms: 3_600_000, resync_interval_ms: 3_600_000 };

describe('a folder pass reads ahead of intake, within bounds', () => {
  it(`hands over up to ${MAX_SLICES_IN_FLIGHT} slices while the first is not durable, past the end of its chunk; the checkpoint waits for it`, async () => {
    const { user, pass } = await newUser(server);
    const n = 1200;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => textMessage(i)),
    );
    const held = heldSink();
    // A first chunk of FIRST_CHUNK_MESSAGES, then chunks of 100 messages, one slice each: the window reads 7 chunks past the first.
    const r = run([account(server, user, pass, { ...slow, batch_size: 100 })], held.sink);
    await eventually(() => held.calls() === MAX_SLICES_IN_FLIGHT, 30_000, 'the window to fill');
    expect(held.sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toBeUndefined();
    expect(held.sink.accepted).toHaveLength(0);
    held.release();
    await eventually(() => held.sink.accepted.length === n && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(held.calls()).toBe(1 + Math.ceil((n - FIRST_CHUNK_MESSAGES) / 100));
    expect(held.sink.tally()).toEqual({ distinct: n, twice: 0 });
    const uids = held.sink.history.map((h) => h.value['lastUid'] as number);
    expect(uids).toEqual([...uids].sort((a, b) => a - b));
    expect(held.sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toMatchObject({ lastUid: n });
  });

  it('holds at most batch_bytes of sources beyond the newest slice while intake is behind', async () => {
    const { user, pass } = await newUser(server);
    // About 30 KiB each, fetched whole: slices of two messages under batch_bytes = 64 KiB.
    const big = (i: number) => textMessage(i).replace(`message number ${i}.`, `message number ${i}. ${'x'.repeat(30_000)}`);
    const n = 40;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => big(i)),
    );
    const held = heldSink();
    const batchBytes = 65_536;
    const r = run([account(server, user, pass, { ...slow, batch_bytes: batchBytes })], held.sink);
    await eventually(() => held.calls() >= 2, 30_000, 'a second slice handed over before the first is durable');
    held.release();
    await eventually(() => held.sink.accepted.length === n && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(held.maxOutstanding()).toBeGreaterThan(0);
    expect(held.maxOutstanding()).toBeLessThanOrEqual(batchBytes);
    expect(held.sink.tally()).toEqual({ distinct: n, twice: 0 });
  });
});
