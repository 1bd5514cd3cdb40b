/**
 * Stopping an account ends whatever it is doing at once: a login the server never answers, a
 * token request the endpoint never answers; a connected session logs out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { account, newUser, run } from './setup.js';
import { startSilentHttp, startSilentImap } from './silent-server.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

/** Resolves with `work`, or rejects once `ms` passed (a deadline on the wait for the stop). */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms)),
  );
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

const slowAccount = { name: 'stuck', route: 'support', host: '127.0.0.1', secure: false, command_timeout_ms: 300_000 };

describe('stopping an IMAP account', () => {
  it('ends a login the server never answers, without waiting for the command deadline', async () => {
    const silent = await startSilentImap();
    try {
      const r = run([{ ...slowAccount, port: silent.port, auth: { user: 'u', pass: 'p' } }], new MemorySink());
      await eventually(() => silent.asked >= 1, 15_000, 'the login command');
      expect(r.adapter.accountHealth()[0]!.state).toBe('connecting');
      await within(r.stop(), 10_000, 'stop()');
      expect(r.adapter.accountHealth()[0]!.state).toBe('stopped');
    } finally {
      await silent.close();
    }
  });

  it('ends an OAuth2 token request the endpoint never answers', async () => {
    const endpoint = await startSilentHttp();
    const silent = await startSilentImap();
    try {
      const oauth2 = { tokenUrl: `http://127.0.0.1:${endpoint.port}/token`, clientId: 'c', clientSecret: 's', grant: 'client_credentials' };
      const r = run([{ ...slowAccount, port: silent.port, auth: { user: 'u', oauth2 } }], new MemorySink());
      await eventually(() => endpoint.asked >= 1, 15_000, 'the token request');
      await within(r.stop(), 10_000, 'stop()');
      expect(r.adapter.accountHealth()[0]!.state).toBe('stopped');
      expect(silent.asked).toBe(0);
    } finally {
      await endpoint.close();
      await silent.close();
    }
  });

  it('logs a connected session out (the server logs "Logged out", not a dropped connection)', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1)]);
    const sink = new MemorySink();
    const r = run([account(server, user, pass)], sink);
    await eventually(() => sink.accepted.length === 1 && r.adapter.accountHealth()[0]!.state === 'idle');
    const loggedOut = (): number =>
      server
        .log()
        .split('\n')
        .filter((l) => l.includes(`imap(${user})`) && l.includes('Disconnected: Logged out')).length;
    const before = loggedOut();
    await r.stop();
    await eventually(() => loggedOut() === before + 1, 15_000, "Dovecot's log line of the LOGOUT");
  });
});
