import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenProvider } from '../../adapters/imap/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startOAuthServer, type OAuthServer } from './oauth-server.js';
import { account, newUser, run } from './setup.js';

let oauth: OAuthServer;
let server: DovecotServer;
beforeAll(async () => {
  oauth = await startOAuthServer();
  server = await startDovecot({ oauth2: { introspectionUrl: oauth.introspectionUrl } });
});
afterAll(async () => {
  await server?.stop();
  await oauth?.close();
});

const fast = {
  backoff: { transient: { baseMs: 100, capMs: 500 }, throttle: { baseMs: 100, capMs: 500 }, auth: { baseMs: 100, capMs: 500 } },
};

describe('OAuth2 token provider', () => {
  it('caches a token until shortly before it expires, then refreshes', async () => {
    oauth.refreshTokens.set('rt-cache', 'cache@example.com');
    let now = 1_000_000;
    const p = createTokenProvider(
      { tokenUrl: oauth.tokenUrl, clientId: 'mailgate', refreshToken: 'rt-cache', grant: 'refresh_token' },
      { now: () => now, skewMs: 60_000 },
    );
    const before = oauth.issued;
    const [a, b] = await Promise.all([p.getToken(), p.getToken()]);
    expect(a).toBe(b);
    expect(oauth.issued - before).toBe(1);
    now += 3600_000 - 61_000;
    expect(await p.getToken()).toBe(a);
    now += 2_000; // inside the renewal margin
    const c = await p.getToken();
    expect(c).not.toBe(a);
    p.invalidate();
    expect(await p.getToken()).not.toBe(c);
    expect(oauth.issued - before).toBe(3);
  });

  it('uses a rotated refresh token from then on', async () => {
    oauth.refreshTokens.set('rt-rotate', 'rotate@example.com');
    oauth.rotate = true;
    try {
      const p = createTokenProvider({ tokenUrl: oauth.tokenUrl, clientId: 'mailgate', refreshToken: 'rt-rotate', grant: 'refresh_token' });
      await p.getToken();
      p.invalidate();
      await p.getToken(); // would fail with the first refresh token, which the server dropped
      expect(oauth.refreshTokens.has('rt-rotate')).toBe(false);
    } finally {
      oauth.rotate = false;
    }
  });

  it('refuses with a coded error when the grant is rejected', async () => {
    const p = createTokenProvider({ tokenUrl: oauth.tokenUrl, clientId: 'mailgate', refreshToken: 'nope', grant: 'refresh_token' });
    await expect(p.getToken()).rejects.toMatchObject({ code: 'MAILGATE_ERR_IMAP_OAUTH_TOKEN', status: 400 });
  });
});

describe('XOAUTH2 / OAUTHBEARER against Dovecot with an oauth2 passdb', () => {
  it('syncs with a refresh-token grant and gets a new token once when the server refuses the old one', async () => {
    const { user } = await newUser(server);
    oauth.refreshTokens.set(`rt-${user}`, user);
    await server.append(user, 'INBOX', [textMessage(1, 'via oauth')]);
    const sink = new MemorySink();
    const auth = { user, oauth2: { tokenUrl: oauth.tokenUrl, clientId: 'mailgate', refreshToken: `rt-${user}`, grant: 'refresh_token' } };
    const before = oauth.issued;
    const r = run([{ ...account(server, user, 'unused'), auth }], sink, fast);
    await eventually(() => sink.accepted.length === 1);
    expect(oauth.issued - before).toBe(1);
    // The token is revoked and the connection drops: the next login is refused, a new token is fetched.
    oauth.revokeAll();
    await server.kick(user);
    await server.append(user, 'INBOX', [textMessage(2, 'after revocation')]);
    await eventually(() => sink.accepted.length === 2);
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(sink.subjects()).toEqual(['via oauth', 'after revocation']);
    expect(oauth.issued - before).toBe(2);
    expect(health.state).not.toBe('auth_failed');
  });

  it('syncs with a client-credentials grant', async () => {
    const { user } = await newUser(server);
    oauth.clients.set(`app-${user}`, { secret: 's3cret', user });
    await server.append(user, 'INBOX', [textMessage(1, 'app access')]);
    const sink = new MemorySink();
    const auth = {
      user,
      oauth2: {
        tokenUrl: oauth.tokenUrl,
        clientId: `app-${user}`,
        clientSecret: 's3cret',
        scope: 'https://outlook.office365.com/.default',
        grant: 'client_credentials',
      },
    };
    const r = run([{ ...account(server, user, 'unused'), auth }], sink, fast);
    await eventually(() => sink.accepted.length === 1);
    await r.stop();
    expect(sink.subjects()).toEqual(['app access']);
  });

  it('reports auth_failed when the token endpoint refuses the grant', async () => {
    const { user } = await newUser(server);
    const sink = new MemorySink();
    const auth = { user, oauth2: { tokenUrl: oauth.tokenUrl, clientId: 'mailgate', refreshToken: 'revoked', grant: 'refresh_token' } };
    const r = run([{ ...account(server, user, 'unused'), auth }], sink, fast);
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'auth_failed');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_OAUTH_TOKEN');
  });

  it('reports auth_failed when the server refuses a fixed access token', async () => {
    const { user } = await newUser(server);
    const sink = new MemorySink();
    const r = run([{ ...account(server, user, 'unused'), auth: { user, accessToken: 'forged' } }], sink, fast);
    await eventually(() => r.adapter.accountHealth()[0]!.state === 'auth_failed');
    const health = r.adapter.accountHealth()[0]!;
    await r.stop();
    expect(health.lastError?.code).toBe('MAILGATE_ERR_IMAP_AUTH');
  });
});
