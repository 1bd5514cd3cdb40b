/**
 * Regressions of the SMTP listener: a slow-loris client held every slot indefinitely (no limit
 * per client address, no deadline for DATA or a session); AUTH was offered before STARTTLS when
 * TLS is configured; `auth` without `tls` was accepted on a non-loopback address; a failed AUTH
 * logged the submitted user name (a password typed into the user field landed in the log).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SmtpAdapter, smtpEntrySchema } from '../../adapters/smtp/index.js';
import { createLogger } from '../../src/logger.js';
import type { Inbound, Intake } from '../../src/pipeline/types.js';
import { RawClient } from './client.js';

let dir: string;
let tls: { key: string; cert: string };
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-smtp-loris-'));
  tls = { key: join(dir, 'key.pem'), cert: join(dir, 'cert.pem') };
  const args = [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    tls.key,
    '-out',
    tls.cert,
  ];
  execFileSync('openssl', [...args, '-days', '2', '-subj', '/CN=localhost'], { stdio: 'ignore' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stored: Inbound[][] = [];
const push: Intake = {
  checkpoint: async () => undefined,
  accept: async (batch) => (stored.push(batch), batch.map((_, i) => ({ id: `i${i}`, duplicate: false }))),
  item: async () => undefined,
};
const stops: AbortController[] = [];
afterEach(() => stops.splice(0).forEach((s) => s.abort()));

async function listener(entry: Record<string, unknown>, log: string[] = []): Promise<number> {
  const destination = new Writable({ write: (c: Buffer, _e, cb) => (log.push(c.toString()), cb()) });
  const parsed = smtpEntrySchema.parse({ name: 'mx', route: 'in', listen: '127.0.0.1:0', recipients: [{ match: '*' }], ...entry });
  const adapter = new SmtpAdapter(parsed, createLogger({ level: 'info', destination }));
  const stop = new AbortController();
  stops.push(stop);
  void adapter.start(push, stop.signal);
  for (let i = 0; i < 200 && adapter.listening() === undefined; i++) await new Promise((r) => setTimeout(r, 10));
  return adapter.listening()!.port;
}

describe('SMTP slow-loris', () => {
  it('refuses a client address past max_connections_per_client at connect (421), others still get in', async () => {
    const port = await listener({ max_connections_per_client: 2 });
    const a = await RawClient.open(port);
    const b = await RawClient.open(port);
    const c = await RawClient.open(port);
    expect([a.greeting.code, b.greeting.code, c.greeting.code]).toEqual([220, 220, 421]);
    const other = await RawClient.open(port, '127.0.0.1', '127.0.0.2');
    expect(other.greeting.code).toBe(220);
    for (const x of [a, b, c, other]) x.client.destroy();
  });

  it('ends a DATA phase that passes its deadline with 421, storing nothing', async () => {
    stored.length = 0;
    const port = await listener({ data_timeout_ms: 1000 });
    const { client } = await RawClient.open(port);
    await client.cmd('EHLO loris.example');
    await client.cmd('MAIL FROM:<a@example.org>');
    await client.cmd('RCPT TO:<b@example.com>');
    expect((await client.cmd('DATA')).code).toBe(354);
    client.write('Subject: drip\r\n\r\n');
    // One byte at a time, each well inside the idle timeout: only the DATA deadline ends it.
    const drip = setInterval(() => client.write('x'), 100);
    const r = await client.next();
    clearInterval(drip);
    expect(r.code).toBe(421);
    await client.closed;
    expect(stored).toHaveLength(0);
  });

  it('ends a session that passes its deadline with 421', async () => {
    const port = await listener({ session_timeout_ms: 1000 });
    const { client } = await RawClient.open(port);
    await client.cmd('EHLO loris.example');
    let last = 250;
    while (last === 250) last = (await client.cmd('NOOP').catch(() => ({ code: 0 }))).code;
    expect(last).toBe(421);
  });
});

describe('SMTP AUTH and TLS', () => {
  const users = { users: [{ user: 'relay', pass: 'relay-password-1234' }] };

  it('offers AUTH only after STARTTLS when TLS is configured, and requires it before MAIL FROM', async () => {
    const port = await listener({ tls, auth: users });
    const { client } = await RawClient.open(port);
    expect((await client.cmd('EHLO c.example')).text).not.toContain('AUTH');
    const plain = Buffer.from('\0relay\0relay-password-1234').toString('base64');
    expect((await client.cmd(`AUTH PLAIN ${plain}`)).code).toBeGreaterThanOrEqual(500);
    expect((await client.cmd('MAIL FROM:<a@example.org>')).code).toBe(530);
    expect((await client.startTls()).code).toBe(220);
    expect((await client.cmd('EHLO c.example')).text).toContain('AUTH PLAIN LOGIN');
    expect((await client.cmd(`AUTH PLAIN ${plain}`)).code).toBe(235);
    expect((await client.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
    client.destroy();
  });

  it('refuses auth without tls on a non-loopback address unless allowed by name', () => {
    const base = { name: 'mx', route: 'in', recipients: [{ match: '*' }], auth: users };
    expect(smtpEntrySchema.safeParse({ ...base, listen: '0.0.0.0:2525' }).success).toBe(false);
    expect(smtpEntrySchema.safeParse({ ...base, listen: '0.0.0.0:2525', allow_plaintext_auth: true }).success).toBe(true);
    expect(smtpEntrySchema.safeParse({ ...base, listen: '127.0.0.1:2525' }).success).toBe(true);
    expect(smtpEntrySchema.safeParse({ ...base, listen: '0.0.0.0:2525', tls }).success).toBe(true);
  });

  it('never logs the submitted user name of a failed AUTH', async () => {
    const log: string[] = [];
    const port = await listener({ auth: users }, log);
    const { client } = await RawClient.open(port);
    await client.cmd('EHLO c.example');
    const typo = Buffer.from('\0MyS3cretPassw0rd\0relay-password-1234').toString('base64');
    expect((await client.cmd(`AUTH PLAIN ${typo}`)).code).toBe(535);
    client.destroy();
    expect(log.join('')).toContain('smtp authentication failed');
    expect(log.join('')).not.toContain('MyS3cretPassw0rd');
  });
});
