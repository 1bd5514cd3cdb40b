/**
 * OAuth2 access tokens for XOAUTH2 / OAUTHBEARER: the refresh-token grant (a user's mailbox,
 * Google Workspace or Microsoft 365 delegated) and the client-credentials grant (Microsoft 365
 * application access), against a configurable token endpoint. A token is cached until shortly
 * before it expires; `invalidate()` after an authentication failure forces a new one.
 */
import { GatewayError } from '../../src/errors.js';
import type { OAuth2Settings } from './config.js';

export interface TokenProvider {
  /** A valid access token (cached, or freshly obtained). `signal` abandons a request in flight. */
  getToken(signal?: AbortSignal): Promise<string>;
  /** Forget the cached token: the server refused it. */
  invalidate(): void;
}

export interface TokenProviderOptions {
  fetch?: typeof fetch;
  now?: () => number;
  /** Renew this long before the token's expiry. Default 60000 ms. */
  skewMs?: number;
  /** Deadline of one token request. Default 30000 ms. */
  timeoutMs?: number;
}

interface TokenResponse {
  access_token?: unknown;
  expires_in?: unknown;
  refresh_token?: unknown;
  error?: unknown;
  error_description?: unknown;
}

/** When the endpoint names no lifetime, assume this one (Google and Microsoft issue 3600 s). */
const DEFAULT_LIFETIME_S = 3600;

export function createTokenProvider(settings: Omit<OAuth2Settings, 'allow_insecure_http'>, opts: TokenProviderOptions = {}): TokenProvider {
  const doFetch = opts.fetch ?? fetch;
  const now = opts.now ?? Date.now;
  const skewMs = opts.skewMs ?? 60_000;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let refreshToken = settings.refreshToken;
  let cached: { token: string; renewAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  function body(): URLSearchParams {
    const form = new URLSearchParams({ grant_type: settings.grant, client_id: settings.clientId });
    if (settings.clientSecret !== undefined) form.set('client_secret', settings.clientSecret);
    if (settings.scope !== undefined) form.set('scope', settings.scope);
    if (settings.grant === 'refresh_token' && refreshToken !== undefined) form.set('refresh_token', refreshToken);
    return form;
  }

  async function request(signal: AbortSignal | undefined): Promise<string> {
    let res: Response;
    const deadline = AbortSignal.timeout(timeoutMs);
    try {
      res = await doFetch(settings.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: body(),
        // A redirect would re-send client_secret and the refresh token to another address: never followed.
        redirect: 'manual',
        signal: signal === undefined ? deadline : AbortSignal.any([deadline, signal]),
      });
    } catch (cause) {
      throw new GatewayError('MAILGATE_ERR_IMAP_OAUTH_TOKEN', `token endpoint unreachable: ${(cause as Error).message}`, { cause });
    }
    const json = (await res.json().catch(() => ({}))) as TokenResponse;
    if (!res.ok || typeof json.access_token !== 'string' || json.access_token === '') {
      const redirected = res.status >= 300 && res.status <= 399 ? 'a redirect, not followed: set tokenUrl to the final address' : undefined;
      const description = typeof json.error_description === 'string' ? `: ${json.error_description}` : '';
      const described = typeof json.error === 'string' ? `${json.error}${description}` : undefined;
      const reason = redirected ?? described ?? 'no access_token';
      throw new GatewayError('MAILGATE_ERR_IMAP_OAUTH_TOKEN', `token endpoint answered ${res.status} (${reason})`, { status: res.status });
    }
    // Providers may rotate refresh tokens (Microsoft does): use the newest from now on.
    if (typeof json.refresh_token === 'string' && json.refresh_token !== '') refreshToken = json.refresh_token;
    const lifetimeS =
      typeof json.expires_in === 'number' && json.expires_in > 0
        ? json.expires_in
        : Number(json.expires_in) > 0
          ? Number(json.expires_in)
          : DEFAULT_LIFETIME_S;
    const lifetimeMs = lifetimeS * 1000;
    // A token shorter-lived than twice the skew is used for half its life instead.
    const renewIn = lifetimeMs > 2 * skewMs ? lifetimeMs - skewMs : lifetimeMs / 2;
    cached = { token: json.access_token, renewAt: now() + renewIn };
    return json.access_token;
  }

  return {
    async getToken(signal) {
      if (cached !== undefined && now() < cached.renewAt) return cached.token;
      // One caller per provider (its account): the request follows that caller's signal.
      inflight ??= request(signal).finally(() => (inflight = undefined));
      return inflight;
    },
    invalidate() {
      cached = undefined;
    },
  };
}

/** A provider around a fixed token (configuration `auth.accessToken`): nothing to refresh. */
export function staticTokenProvider(token: string): TokenProvider {
  return { getToken: async () => token, invalidate: () => undefined };
}
