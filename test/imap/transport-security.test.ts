/**
 * The transport rules of IMAP accounts: no login in clear to a remote server that (or whose
 * path) hides STARTTLS, no http token endpoint off this machine, no token request that follows
 * a redirect with the client secret.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { imapAccountSchema } from '../../adapters/imap/config.js';
import { startTlsMode } from '../../adapters/imap/connection.js';
import { createTokenProvider } from '../../adapters/imap/oauth.js';

const base = { name: 'a', route: 'r', auth: { user: 'u', pass: 'p' } };
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      handler!(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, bodies };
}

describe('IMAP STARTTLS stripping', () => {
  it('secure: false to a remote host requires STARTTLS (a stripped capability fails the connect)', () => {
    expect(startTlsMode(imapAccountSchema.parse({ ...base, host: 'imap.example.com', port: 143, secure: false }))).toBe(true);
  });

  it('loopback hosts and allow_plaintext keep opportunistic STARTTLS; secure: true is TLS from the first byte', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) {
      expect(startTlsMode(imapAccountSchema.parse({ ...base, host, port: 143, secure: false }))).toBeUndefined();
    }
    expect(
      startTlsMode(imapAccountSchema.parse({ ...base, host: 'imap.example.com', secure: false, allow_plaintext: true })),
    ).toBeUndefined();
    expect(startTlsMode(imapAccountSchema.parse({ ...base, host: 'imap.example.com' }))).toBeUndefined();
  });
});

describe('OAuth token endpoint', () => {
  it('plain http to a remote token endpoint is refused unless allow_insecure_http is set', () => {
    const oauth2 = { tokenUrl: 'http://login.example.com/token', clientId: 'c', clientSecret: 's', grant: 'client_credentials' };
    const refused = imapAccountSchema.safeParse({ ...base, host: 'imap.example.com', auth: { user: 'u', oauth2 } });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/https/);
    expect(
      imapAccountSchema.safeParse({ ...base, host: 'h', auth: { user: 'u', oauth2: { ...oauth2, allow_insecure_http: true } } }).success,
    ).toBe(true);
    expect(
      imapAccountSchema.safeParse({ ...base, host: 'h', auth: { user: 'u', oauth2: { ...oauth2, tokenUrl: 'http://127.0.0.1:9/t' } } })
        .success,
    ).toBe(true);
  });

  it('redirect leak: a 307/308 from the token endpoint is not followed with client_secret', async () => {
    const elsewhere = await listen((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"stolen"}'),
    );
    for (const status of [307, 308]) {
      const endpoint = await listen((_req, res) => res.writeHead(status, { location: elsewhere.url }).end());
      const p = createTokenProvider({
        tokenUrl: endpoint.url,
        clientId: 'c',
        clientSecret: 'the-client-secret',
        grant: 'client_credentials',
      });
      await expect(p.getToken()).rejects.toMatchObject({ code: 'MAILGATE_ERR_IMAP_OAUTH_TOKEN', status });
      expect(endpoint.bodies[0]).toContain('client_secret=the-client-secret');
    }
    expect(elsewhere.bodies).toEqual([]);
  });
});
