/**
 * `authenticate: true`: SPF, DKIM and DMARC verdicts of each message into its envelope, against a
 * DNS resolver the test provides (a DKIM key it generated, SPF and DMARC records), over a real
 * SMTP transaction into a recording push sink.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpAdapter } from '../../adapters/smtp/adapter.js';
import { smtpEntrySchema } from '../../adapters/smtp/config.js';
import { createLogger } from '../../src/logger.js';
import type { Inbound, Intake } from '../../src/pipeline/types.js';
import { eventually } from '../service/serve-process.js';

// mailauth's index loads its BIMI module, which needs Node 22: the signer is taken from its own module.
const { dkimSign } = createRequire(import.meta.url)('mailauth/lib/dkim/sign.js') as typeof import('mailauth');
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const DNS: Record<string, string[][]> = {
  'TXT s1._domainkey.example.org': [[`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`]],
  'TXT example.org': [['v=spf1 ip4:127.0.0.1 -all']],
  'TXT _dmarc.example.org': [['v=DMARC1; p=reject']],
  'TXT forged.example': [['v=spf1 ip4:192.0.2.1 -all']],
  'TXT _dmarc.forged.example': [['v=DMARC1; p=reject']],
};
const resolver = (name: string, rrtype: string): Promise<string[][]> => {
  const found = DNS[`${rrtype} ${name}`];
  return found ? Promise.resolve(found) : Promise.reject(Object.assign(new Error(`${name} ${rrtype}: not found`), { code: 'ENOTFOUND' }));
};

const stored: Inbound[] = [];
const push: Intake = {
  checkpoint: () => Promise.resolve(undefined),
  accept: (batch) => {
    stored.push(...batch);
    return Promise.resolve(batch.map((_, i) => ({ id: String(stored.length + i), duplicate: false })));
  },
  item: () => Promise.resolve(undefined),
};
const stop = new AbortController();
let running: Promise<void>;
let port: number;
let adapter: SmtpAdapter;

beforeAll(async () => {
  const entry = smtpEntrySchema.parse({
    name: 'mx',
    route: 'support',
    listen: '127.0.0.1:0',
    recipients: [{ match: '*' }],
    authenticate: true,
  });
  adapter = new SmtpAdapter(entry, createLogger(false), resolver);
  running = adapter.start(push, stop.signal);
  await eventually(() => adapter.listening() !== undefined, 'listening');
  port = adapter.listening()!.port;
});

afterAll(async () => {
  stop.abort();
  await running;
});

const body = (from: string, id: string) =>
  `From: Sender <${from}>\r\nTo: support@example.com\r\nSubject: verdicts\r\nMessage-ID: <${id}@example.org>\r\n` +
  'Date: Mon, 02 Mar 2026 10:00:00 +0000\r\n\r\nHello.\r\n';

const send = (from: string, raw: string) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'mail.example.org' } as never)
    .sendMail({ envelope: { from, to: ['support@example.com'] }, raw });

describe('SMTP authentication results', () => {
  it('passes SPF, DKIM and DMARC for a signed message from an allowed address, and keeps the bytes', async () => {
    const message = body('a@example.org', 'signed');
    const key = { signingDomain: 'example.org', selector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) };
    const signed = await dkimSign(message, { ...key, signatureData: [key] } as never);
    expect(signed.signatures).toMatch(/^DKIM-Signature: /);
    expect(signed.errors).toEqual([]);
    const raw = signed.signatures + message;
    expect((await send('a@example.org', raw)).response).toMatch(/^250 /);
    const got = stored.at(-1)!;
    expect(got.raw.toString()).toBe(raw);
    expect(got.origin.envelope).toMatchObject({ spf: 'pass', dkim: 'pass', dmarc: 'pass', helo: 'mail.example.org' });
  });

  it('fails SPF and DMARC for an unsigned message from an address whose SPF does not list the client', async () => {
    expect((await send('b@forged.example', body('b@forged.example', 'forged'))).response).toMatch(/^250 /);
    expect(stored.at(-1)!.origin.envelope).toMatchObject({ spf: 'fail', dkim: 'none', dmarc: 'fail' });
  });
});
