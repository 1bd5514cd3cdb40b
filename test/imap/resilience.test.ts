import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointKey } from '../../adapters/imap/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startProxy } from './proxy.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

const fast = {
  backoff: { transient: { baseMs: 100, capMs: 500 }, throttle: { baseMs: 200, capMs: 1000 }, auth: { baseMs: 200, capMs: 1000 } },
};
const padded = (i: number): string => textMessage(i).replace('\r\n\r\n', `\r\n\r\n${'lorem ipsum '.repeat(400)}\r\n`);

describe('IMAP adapter resilience', () => {
  // Regression: imapflow answers a FETCH on a connection that closed meanwhile with nothing at all;
  // believing that answer moved the checkpoint past 900 unread messages.
  it('survives a Dovecot restart mid-sync and completes, each message once', async () => {
    const { user, pass } = await newUser(server);
    const n = 1200;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => textMessage(i)),
    );
    const sink = new MemorySink();
    let batches = 0;
    sink.onAccept = async () => {
      if (++batches === 3) await server.restart();
    };
    const r = run([account(server, user, pass, { batch_size: 100 })], sink, fast);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
    expect(health.failures).toBeGreaterThanOrEqual(1);
  });

  it('survives the connection cut in the middle of a FETCH response', async () => {
    const { user, pass } = await newUser(server);
    const n = 300;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => padded(i)),
    );
    const proxy = await startProxy(server.port);
    const sink = new MemorySink();
    let batches = 0;
    sink.onAccept = () => {
      // After the first batch, cut 100 kB into the next FETCH answer (messages are ~5 kB).
      if (++batches === 1) proxy.cutAfter(100_000);
    };
    const r = run([{ ...account(server, user, pass, { batch_size: 100 }), port: proxy.port }], sink, fast);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    await proxy.close();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
    expect(health.failures).toBeGreaterThanOrEqual(1);
    expect(proxy.connections).toBeGreaterThanOrEqual(2);
  });

  it('a server that stalls in the middle of a FETCH answer: the command deadline fires, the connection is replaced, the sync completes', async () => {
    const { user, pass } = await newUser(server);
    const n = 300;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => padded(i)),
    );
    const proxy = await startProxy(server.port);
    // 100 kB into the server's answers: inside the first chunk's FETCH (25 messages, ~125 kB).
    proxy.stallAfter(100_000);
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, pass, { batch_size: 100, command_timeout_ms: 2000 }), port: proxy.port }], sink, fast);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle', 30_000, 'the whole folder');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    await proxy.close();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_TIMEOUT');
    expect(health.lastError?.message).toMatch(/UID FETCH INBOX exceeded its deadline of 2000 ms/);
    expect(proxy.connections).toBe(2);
  });

  it('survives its IMAP process being killed on the server (doveadm kick) mid-sync', async () => {
    const { user, pass } = await newUser(server);
    const n = 600;
    server.fillMaildir(
      user,
      'INBOX',
      Array.from({ length: n }, (_, i) => textMessage(i)),
    );
    const sink = new MemorySink();
    let batches = 0;
    sink.onAccept = async () => {
      if (++batches === 2) await server.kick(user);
    };
    const r = run([account(server, user, pass, { batch_size: 100 })], sink, fast);
    await eventually(() => sink.accepted.length >= n && r.adapter.accountHealth()[0]!.state === 'idle');
    await r.stop();
    expect(sink.tally()).toEqual({ distinct: n, twice: 0 });
  });

  it('re-reads a folder that was deleted and recreated (new UIDVALIDITY)', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'Work', [textMessage(1, 'first life 1'), textMessage(2, 'first life 2')]);
    const sink = new MemorySink();
    const r = run([account(server, user, pass, { folders: ['Work'], idle_watchdog_ms: 1000 })], sink, fast);
    await eventually(() => sink.accepted.length === 2);
    const before = sink.checkpoints.get(checkpointKey(user, 'Work'))!;
    const uidValidity = await server.recreateFolder(user, 'Work');
    await server.append(user, 'Work', [textMessage(3, 'second life 1')]);
    await eventually(() => sink.accepted.length === 3);
    await r.stop();
    expect(uidValidity).not.toBe(before['uidValidity']);
    const last = sink.accepted[2]!;
    expect(last.origin.details).toMatchObject({ folder: 'Work', uidValidity, uid: 1 });
    expect(sink.checkpoints.get(checkpointKey(user, 'Work'))).toMatchObject({ uidValidity, lastUid: 1 });
  });

  it('waits out a throttling refusal and connects afterwards', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1)]);
    const proxy = await startProxy(server.port);
    proxy.refuseNext(2, '* BYE [UNAVAILABLE] Too many simultaneous connections');
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, pass), port: proxy.port }], sink, fast);
    await eventually(() => sink.accepted.length === 1);
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    await proxy.close();
    expect(health.failures).toBe(2);
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_THROTTLED');
  });

  it('detects a silently dead connection while idling (watchdog NOOP) and reconnects', async () => {
    const { user, pass } = await newUser(server);
    const proxy = await startProxy(server.port);
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, pass, { idle_watchdog_ms: 1000, command_timeout_ms: 2000 }), port: proxy.port }], sink, fast);
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'idle');
    proxy.blackhole(true);
    await eventually(() => r.adapter.accountHealth()[0]!.failures >= 1);
    proxy.blackhole(false);
    await server.append(user, 'INBOX', [textMessage(5, 'after the dead connection')]);
    await eventually(() => sink.accepted.length === 1);
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    await proxy.close();
    expect(sink.subjects()).toEqual(['after the dead connection']);
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_TIMEOUT');
  });

  it('reports auth_failed for a wrong password and keeps running without crashing', async () => {
    const { user } = await newUser(server);
    const sink = new MemorySink();
    const r = run([account(server, user, 'wrong')], sink, fast);
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'auth_failed');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_AUTH');
    expect(r.adapter.accountHealth()[0]!.state).toBe('stopped');
  });
});
