/**
 * What the IMAP adapter logs, captured from a real pino logger: every line carries
 * { adapter: 'imap', account }, a coded reason, and never a password.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startProxy } from './proxy.js';
import { account, closedPort, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

interface Line {
  level: string;
  msg: string;
  adapter?: string;
  account?: string;
  code?: string;
  [k: string]: unknown;
}

function capture(): { logger: ReturnType<typeof createLogger>; lines: Line[]; text: () => string } {
  const lines: Line[] = [];
  let text = '';
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines, text: () => text };
}

const fast = { backoff: { transient: { baseMs: 100, capMs: 500 }, auth: { baseMs: 200, capMs: 1000 } } };

describe('IMAP adapter logs', () => {
  it('an authentication failure: an error line with its code and the next attempt, without the password', async () => {
    const { user } = await newUser(server);
    const log = capture();
    const secret = 'not-the-password-4711';
    const r = run([account(server, user, secret)], new MemorySink(), { ...fast, logger: log.logger });
    await eventually(() => log.lines.some((l) => l.code === 'MAILGATE_ERR_IMAP_AUTH'), 20_000, 'the auth failure line');
    await r.stop();
    const line = log.lines.find((l) => l.code === 'MAILGATE_ERR_IMAP_AUTH')!;
    expect(line).toMatchObject({ level: 'error', adapter: 'imap', account: user });
    expect(line.msg).toMatch(/login refused.*next attempt in/);
    expect(typeof line['retryInMs']).toBe('number');
    expect(log.text()).not.toContain(secret);
  });

  it('a refused connection: a warning with the cause and the backoff, again at each attempt', async () => {
    const log = capture();
    const port = await closedPort();
    const r = run(
      [{ name: 'nobody-home', route: 'support', host: '127.0.0.1', port, secure: false, auth: { user: 'u', pass: 'secret-pass-1234' } }],
      new MemorySink(),
      { ...fast, logger: log.logger },
    );
    await eventually(
      () => log.lines.filter((l) => l.code === 'MAILGATE_ERR_IMAP_CONNECTION').length >= 2,
      20_000,
      'two connection failure lines',
    );
    await r.stop();
    const line = log.lines.find((l) => l.code === 'MAILGATE_ERR_IMAP_CONNECTION')!;
    expect(line).toMatchObject({ level: 'warn', adapter: 'imap', account: 'nobody-home' });
    expect(line.msg).toMatch(/cannot connect .*ECONNREFUSED.*retrying in \d+ ms/);
    expect(log.text()).not.toContain('secret-pass-1234');
  });

  it('connected, disconnected with the reason, reconnecting; a missing folder; a UIDVALIDITY reset; logged out at stop', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'Work', [textMessage(1)]);
    const proxy = await startProxy(server.port);
    const log = capture();
    const sink = new MemorySink();
    const cfg = { ...account(server, user, pass, { folders: ['Work', 'Nowhere'], idle_watchdog_ms: 1000 }), port: proxy.port };
    const r = run([cfg], sink, { ...fast, logger: log.logger });
    await eventually(() => sink.accepted.length === 1 && r.adapter.accountHealth()[0]!.state === 'idle');
    proxy.cutAll();
    await eventually(() => log.lines.filter((l) => l.msg.startsWith('connected to')).length >= 2, 20_000, 'a second connection');
    await server.recreateFolder(user, 'Work');
    await eventually(() => log.lines.some((l) => /UIDVALIDITY of "Work" changed/.test(l.msg)), 20_000, 'the reset line');
    await r.stop();
    await proxy.close();
    const msgs = log.lines.map((l) => l.msg);
    expect(log.lines.every((l) => l.adapter === 'imap' && l.account === user)).toBe(true);
    expect(msgs.filter((m) => m === 'folder "Nowhere" does not exist; tried again at the next resync').length).toBeGreaterThanOrEqual(1);
    expect(log.lines.find((l) => l.msg.startsWith('disconnected:') && l.level === 'warn')).toMatchObject({
      code: 'MAILGATE_ERR_IMAP_CONNECTION',
    });
    expect(msgs.some((m) => /^reconnecting in \d+ ms$/.test(m))).toBe(true);
    expect(msgs[msgs.length - 1]).toBe('disconnected: the service is stopping (logged out)');
    expect(log.text()).not.toContain(pass);
  });
});
