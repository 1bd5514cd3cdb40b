/**
 * Access tokens for Gmail through google-auth-library, behind the process's token cache
 * (src/tokens.ts: renewed before they expire, fetched fresh once after Gmail refused one):
 * - a service account with domain-wide delegation: the JWT-bearer grant (RFC 7523) for each
 *   impersonated user, one cache per user, the assertion signed by the library's JWT client;
 * - one consenting user: the refresh-token grant of the library's OAuth2 client.
 *
 * The token endpoint is the key file's `token_uri` (service account) or `token_url`: the
 * library's JWT client posts to Google's endpoint and names it as the assertion's audience
 * whatever the key file says, so its transport is given a request hook that sends the token
 * request to `token_uri` instead, and the assertion names `token_uri` as its audience. The
 * library's own retries are off (the mailbox's backoff decides). A refusal is a coded error:
 * `unauthorized_client` (delegation not granted for the scope) has its own code.
 */
import { readFileSync } from 'node:fs';
import { gaxios, JWT, OAuth2Client } from 'google-auth-library';
import { GatewayError } from '../../src/errors.js';
import { createTokenCache, type AccessToken, type TokenCache } from '../../src/tokens.js';
import { GOOGLE_TOKEN_URL, type GmailEntry } from './config.js';

export const SCOPE_READONLY = 'https://www.googleapis.com/auth/gmail.readonly';
export const SCOPE_MODIFY = 'https://www.googleapis.com/auth/gmail.modify';

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  token_uri: string;
}

/** The fields of a service account key file that are used; a missing one is a configuration error. */
export function readServiceAccount(file: string): ServiceAccountKey {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${file}: not a readable JSON key file (${(err as Error).message})`);
  }
  const { client_email, private_key, token_uri } = parsed;
  if (typeof client_email !== 'string' || typeof private_key !== 'string')
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${file}: a service account key needs client_email and private_key`);
  return { client_email, private_key, token_uri: typeof token_uri === 'string' ? token_uri : GOOGLE_TOKEN_URL };
}

/** A transport that sends the library's token requests to `tokenUrl`, once, within `timeoutMs`. */
function transport(tokenUrl: string, timeoutMs: number): gaxios.Gaxios {
  const g = new gaxios.Gaxios({ timeout: timeoutMs, retry: false });
  g.interceptors.request.add({
    resolved: (opts: gaxios.GaxiosOptionsPrepared) => {
      if (opts.url.href === GOOGLE_TOKEN_URL) opts.url = new URL(tokenUrl);
      opts.retry = false;
      delete opts.retryConfig;
      return Promise.resolve(opts);
    },
  });
  return g;
}

/** The token endpoint's refusal as a mailbox error. */
function refusal(err: unknown, who: string): GatewayError {
  const e = err as { response?: { status?: number; data?: { error?: string; error_description?: string } }; message?: string };
  const data = e.response?.data;
  const error = typeof data?.error === 'string' ? data.error : undefined;
  if (error === 'unauthorized_client')
    return new GatewayError(
      'MAILGATE_ERR_GMAIL_DELEGATION',
      `${who}: the token endpoint answered unauthorized_client (${data?.error_description ?? 'delegation not granted'}): grant the service account domain-wide delegation with the scope in the Admin console`,
      { cause: err },
    );
  const why = error ? `${error}: ${data?.error_description ?? ''}` : (e.message ?? String(err)).split('\n')[0];
  return new GatewayError('MAILGATE_ERR_GMAIL_TOKEN', `${who}: the token endpoint refused a token: ${why}`, { cause: err });
}

function token(creds: { access_token?: string | null; expiry_date?: number | null }, who: string): AccessToken {
  if (!creds.access_token)
    throw new GatewayError('MAILGATE_ERR_GMAIL_TOKEN', `${who}: the token endpoint answered without an access token`);
  return { token: creds.access_token, expiresAt: creds.expiry_date ?? Date.now() + 3_300_000 };
}

/** The token source of an entry: `forUser(user)` is the cache of that mailbox's tokens. */
export interface GmailTokens {
  forUser(user: string): TokenCache;
}

export function gmailTokens(entry: GmailEntry, createCache: typeof createTokenCache = createTokenCache): GmailTokens {
  const scopes = [entry.after_delivery === 'none' ? SCOPE_READONLY : SCOPE_MODIFY];
  const timeout = entry.request_timeout_ms;
  const auth = entry.auth;
  if ('service_account' in auth) {
    const key = readServiceAccount(auth.service_account);
    const caches = new Map<string, TokenCache>();
    return {
      forUser(user) {
        let cache = caches.get(user);
        if (cache === undefined) {
          cache = createCache(async () => {
            // A new client each time: the library keeps its own token, and `fresh` must bypass it.
            const jwt = new JWT({
              email: key.client_email,
              key: key.private_key,
              scopes,
              subject: user,
              additionalClaims: { aud: key.token_uri },
              transporter: transport(key.token_uri, timeout),
            });
            try {
              return token(await jwt.authorize(), user);
            } catch (err) {
              throw err instanceof GatewayError ? err : refusal(err, user);
            }
          });
          caches.set(user, cache);
        }
        return cache;
      },
    };
  }
  const cache = createCache(async () => {
    const client = new OAuth2Client({
      clientId: auth.client_id,
      clientSecret: auth.client_secret,
      endpoints: { oauth2TokenUrl: auth.token_url },
      transporter: transport(auth.token_url, timeout),
    });
    client.setCredentials({ refresh_token: auth.refresh_token });
    try {
      const { token: t, res } = await client.getAccessToken();
      const expiry = (res?.data as { expiry_date?: number } | undefined)?.expiry_date ?? client.credentials.expiry_date;
      return token({ access_token: t ?? null, expiry_date: expiry ?? null }, 'refresh token');
    } catch (err) {
      throw err instanceof GatewayError ? err : refusal(err, 'refresh token');
    }
  });
  return { forUser: () => cache };
}
