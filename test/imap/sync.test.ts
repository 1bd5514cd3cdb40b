import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointKey } from '../../adapters/imap/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

describe('IMAP sync against Dovecot', () => {
  it('reads a few thousand messages: nothing missing, nothing twice, checkpoint at the last UID', async () => {
    const { user, pass } = await newUser(server);
    const n = 3000;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => textMessage(i)),
    );
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { batch_size: 250 })], sink);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
    expect(new Set(sink.subjects())).toEqual(new Set(Array.from({ length: n }, (_, i) => `message ${i}`)));
    const cp = sink.checkpoints.get(checkpointKey(user, 'INBOX'));
    expect(cp).toMatchObject({ lastUid: n });
    // Every batch respected batch_size, and the checkpoint only moved forward.
    const uids = sink.history.map((h) => h.value['lastUid'] as number);
    expect(uids).toEqual([...uids].sort((a, b) => a - b));
    expect(Math.max(...sink.history.map((h) => h.count))).toBeLessThanOrEqual(250);
    // The first chunks are smaller (FIRST_CHUNK_MESSAGES, then CHUNK_GROWTH times the one before up
    // to batch_size): the first comment does not wait for a whole batch_size, nor intake for a large second chunk.
    expect(sink.history.filter((h) => h.count > 0).map((h) => h.count)).toEqual([25, 100, ...Array<number>(11).fill(250), 125]);
    expect(sink.accepted.every((m) => m.route === 'support' && m.origin.adapter === 'imap' && m.origin.instance === user)).toBe(true);
  });

  it('hands the last slice of a pass over in pieces, each with its own checkpoint (the tail does not run in series over a whole chunk)', async () => {
    const { user, pass } = await newUser(server);
    const n = 900;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => textMessage(i)),
    );
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { batch_size: 500 })], sink);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
    // Chunks of 25, 100, 400 and 375: the last one as two calls (tailPieces).
    const calls = sink.history.filter((h) => h.count > 0);
    expect(calls.map((h) => h.count)).toEqual([25, 100, 400, 188, 187]);
    expect(calls.map((h) => h.value['lastUid'])).toEqual([25, 125, 525, 713, 900]);
    expect(sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toMatchObject({ lastUid: n });
  });

  it('resumes from the checkpoint: a second run reads only what is new', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1), textMessage(2)]);
    const sink = new MemorySink();
    let r = run([account(server, user, pass)], sink);
    await eventually(() => sink.accepted.length === 2);
    await r.stop();
    await server.append(user, 'INBOX', [textMessage(3)]);
    r = run([account(server, user, pass)], sink);
    await eventually(() => sink.accepted.length >= 3 && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(sink.subjects()).toEqual(['message 1', 'message 2', 'message 3']);
  });

  it('delivers mail appended while idling (IDLE), without polling', async () => {
    const { user, pass } = await newUser(server);
    const sink = new MemorySink();
    // Polling and watchdog far beyond the test timeout: only IDLE can bring the message in.
    const r = run(
      [account(server, user, pass, { poll_interval_ms: 3_600_000, idle_watchdog_ms: 3_600_000, resync_interval_ms: 3_600_000 })],
      sink,
    );
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'idle');
    // Let IDLE start and the settling NOOP pass: from here only an IDLE notification helps.
    // A fixed wait on purpose: neither the adapter nor Dovecot tells when IDLE has really begun.
    await new Promise((res) => setTimeout(res, 3000));
    await server.append(user, 'INBOX', [textMessage(7, 'arrived during IDLE')]);
    await eventually(() => sink.accepted.length === 1, 15_000, 'the message appended during IDLE');
    await r.stop();
    expect(sink.subjects()).toEqual(['arrived during IDLE']);
  });

  it('new mail after a sync: the waiting session is in IDLE itself, not after the auto-IDLE delay (the fixed second on new mail)', async () => {
    const { user, pass } = await newUser(server);
    const sink = new MemorySink();
    // imapflow's own auto-IDLE far beyond the test timeout, and no poll or watchdog: a message
    // appended once the session waits is announced only if the session started IDLE itself.
    // (With IDLE left to imapflow's delay, each message arriving within that delay of the last
    // sync waited for it.)
    const slow = { poll_interval_ms: 3_600_000, idle_watchdog_ms: 3_600_000, resync_interval_ms: 3_600_000 };
    const r = run([account(server, user, pass, slow)], sink, { autoIdleDelayMs: 3_000_000 });
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'idle');
    // Past the settling NOOP (one second after the wait began), which would find the mail too.
    await new Promise((res) => setTimeout(res, 2000));
    await server.append(user, 'INBOX', [textMessage(3, 'first')]);
    await eventually(() => sink.accepted.length === 1, 15_000, 'the first message, announced in IDLE');
    // Again right after that sync: the session waits in IDLE again at once.
    await server.append(user, 'INBOX', [textMessage(4, 'second')]);
    await eventually(() => sink.accepted.length === 2, 15_000, 'the second message, appended right after a sync');
    await r.stop();
    expect(sink.subjects()).toEqual(['first', 'second']);
  });

  it('finds mail that arrived between the last search and the start of IDLE', async () => {
    const { user, pass } = await newUser(server);
    const sink = new MemorySink();
    const r = run(
      [account(server, user, pass, { poll_interval_ms: 3_600_000, idle_watchdog_ms: 3_600_000, resync_interval_ms: 3_600_000 })],
      sink,
    );
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'idle');
    await server.append(user, 'INBOX', [textMessage(9, 'right after the sync pass')]);
    await eventually(() => sink.accepted.length === 1);
    await r.stop();
    expect(sink.subjects()).toEqual(['right after the sync pass']);
  });

  it('mail that reaches the idle folder while another folder is being synced is read right after that sync, not at the watchdog tick', async () => {
    const { user, pass } = await newUser(server);
    server.fillMaildir(
      user,
      'Big',
      Array.from({ length: 600 }, (_, i) => textMessage(i)),
    );
    await server.createFolder(user, 'Big');
    const sink = new MemorySink();
    let appended = false;
    sink.onAccept = async (batch) => {
      if (appended || batch[0]?.origin.details['folder'] !== 'Big') return;
      appended = true;
      // INBOX is not selected now: no IDLE, no EXISTS notification can announce this message.
      await server.append(user, 'INBOX', [textMessage(1, 'while Big was synced')]);
    };
    const slow = { poll_interval_ms: 3_600_000, idle_watchdog_ms: 3_600_000, resync_interval_ms: 3_600_000, batch_size: 100 };
    const r = run([account(server, user, pass, { folders: ['INBOX', 'Big'], ...slow })], sink);
    await eventually(() => sink.accepted.length === 601, 15_000, 'the 600 messages of Big and the one of INBOX');
    await r.stop();
    expect(sink.accepted.filter((m) => m.origin.details['folder'] === 'INBOX').map((m) => m.origin.details['uid'])).toEqual([1]);
    expect(sink.subjects()).toContain('while Big was synced');
  });

  it('polls when IDLE is off', async () => {
    const { user, pass } = await newUser(server);
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { idle: false, poll_interval_ms: 1000 })], sink);
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'idle');
    await server.append(user, 'INBOX', [textMessage(8, 'found by polling')]);
    await eventually(() => sink.accepted.length === 1);
    await r.stop();
    expect(sink.subjects()).toEqual(['found by polling']);
  });

  it('reads several folders, special-use names and `*`; resyncs folders that do not idle', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1, 'in inbox')]);
    await server.append(user, 'Projects', [textMessage(2, 'in projects')]);
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { folders: ['*'], resync_interval_ms: 1000 })], sink);
    await eventually(() => sink.accepted.length === 2);
    await server.append(user, 'Projects', [textMessage(3, 'later in projects')]);
    await eventually(() => sink.accepted.length === 3);
    await r.stop();
    expect(sink.accepted.map((m) => `${m.origin.details['folder']}:${m.origin.details['uid']}`).sort()).toEqual([
      'INBOX:1',
      'Projects:1',
      'Projects:2',
    ]);
  });

  it('bounds the first backfill with `since`, and reads new mail of any date afterwards', async () => {
    const { user, pass } = await newUser(server);
    await server.withClient(user, async (c) => {
      await c.append('INBOX', textMessage(1, 'old'), [], new Date('2020-01-01T00:00:00Z'));
      await c.append('INBOX', textMessage(2, 'recent'), [], new Date('2026-03-01T00:00:00Z'));
    });
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { since: '2025-01-01', poll_interval_ms: 1000, idle: false })], sink);
    await eventually(() => sink.accepted.length === 1 && r.adapter.accountHealth()[0]!.state === 'idle');
    await server.withClient(user, (c) => c.append('INBOX', textMessage(3, 'new but old-dated'), [], new Date('2019-01-01T00:00:00Z')));
    await eventually(() => sink.accepted.length === 2);
    await r.stop();
    expect(sink.subjects()).toEqual(['recent', 'new but old-dated']);
  });

  it('a `since` backfill interrupted by a crash resumes still honouring `since`, and reads new mail of any date afterwards', async () => {
    const { user, pass } = await newUser(server);
    const dates = ['2026-03-01', '2020-01-01', '2026-03-02', '2020-01-02', '2026-03-03'];
    await server.withClient(user, async (c) => {
      for (const [i, d] of dates.entries())
        await c.append('INBOX', textMessage(i + 1, `${d.startsWith('2020') ? 'old' : 'recent'} ${i + 1}`), [], new Date(`${d}T00:00:00Z`));
    });
    const sink = new MemorySink();
    const cfg = account(server, user, pass, { since: '2025-01-01', batch_size: 1, idle: false, poll_interval_ms: 1000 });
    // The first run dies while storing its second message: only `recent 1` is durable.
    let crashed: Promise<void> | undefined;
    const first = run([cfg], sink);
    sink.onAccept = (batch) => {
      if (batch.length === 0 || sink.accepted.length === 0) return;
      crashed ??= first.stop();
      throw new Error('the process died here');
    };
    await eventually(() => crashed !== undefined);
    await crashed;
    expect(sink.subjects()).toEqual(['recent 1']);
    expect(sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toMatchObject({ lastUid: 1, sinceUntil: 5 });

    sink.onAccept = undefined;
    const second = run([cfg], sink);
    await eventually(() => sink.accepted.length === 3 && second.adapter.accountHealth()[0]!.state === 'idle');
    expect(sink.checkpoints.get(checkpointKey(user, 'INBOX'))).toEqual(expect.not.objectContaining({ sinceUntil: expect.anything() }));
    await server.withClient(user, (c) => c.append('INBOX', textMessage(6, 'new but old-dated'), [], new Date('2019-01-01T00:00:00Z')));
    await eventually(() => sink.accepted.length === 4);
    await second.stop();
    expect(sink.subjects()).toEqual(['recent 1', 'recent 3', 'recent 5', 'new but old-dated']);
  });

  it('does not move the checkpoint when the sink fails, and retries until it accepts', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1), textMessage(2), textMessage(3)]);
    const sink = new MemorySink();
    sink.failures = 2;
    const r = run([account(server, user, pass, { batch_size: 2 })], sink);
    await eventually(() => sink.accepted.length === 3);
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(sink.failed).toBe(2);
    expect(sink.tally()).toEqual({ distinct: 3, twice: 0 });
    // The first checkpoint written is the first accepted batch, never one past a failed batch.
    expect(sink.history[0]).toMatchObject({ value: { lastUid: 2 }, count: 2 });
    // A batch handed over behind the failed one fails with it: at least one failed pass is counted.
    expect(health.failures).toBeGreaterThanOrEqual(1);
    expect(health.lastError?.code).toBe('MAILGATE_ERR_STORE_UNAVAILABLE');
  });
});
