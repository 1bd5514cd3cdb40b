/**
 * Access tokens for Graph by the client-credentials grant, through @azure/msal-node (secret or
 * certificate), behind the process's token cache (src/tokens.ts): renewed before they
 * expire, and fetched fresh once after Graph refused one.
 *
 * msal-node accepts only https authorities and checks that the metadata document's issuer has
 * the authority's origin. For an http authority on a loopback host (a local stand-in) its
 * network-client hook bridges the gap: msal is given the https form of the address, and the
 * hook sends those requests over http to the same host and port and rewrites the address back
 * in the answers. Nothing else is rewritten, and only loopback hosts (the schema refuses http
 * elsewhere).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfidentialClientApplication, type Configuration, type INetworkModule, type NetworkResponse } from '@azure/msal-node';
import { GatewayError } from '../../src/errors.js';
import { createTokenCache, type TokenCache } from '../../src/tokens.js';
import type { GraphEntry } from './config.js';

/** `https://graph.microsoft.com/v1.0` → `https://graph.microsoft.com/.default`. */
export function graphScope(graphUrl: string): string {
  return `${new URL(graphUrl).origin}/.default`;
}

/** The credential of the app registration as msal wants it. */
function credential(auth: GraphEntry['auth']): Pick<Configuration['auth'], 'clientSecret' | 'clientCertificate'> {
  if ('client_secret' in auth) return { clientSecret: auth.client_secret };
  const pem = readFileSync(auth.certificate, 'utf8');
  const key = /-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[\s\S]+?-----END (?:RSA |EC )?PRIVATE KEY-----/.exec(pem)?.[0];
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  if (key === undefined || cert === undefined)
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${auth.certificate} must hold a PEM private key and a PEM certificate`);
  const x509 = new X509Certificate(cert);
  const thumbprintSha256 = createHash('sha256').update(x509.raw).digest('hex');
  return { clientCertificate: { thumbprintSha256, privateKey: key, x5c: cert } };
}

/** msal's network client for an http loopback authority: https in msal's view, http on the wire. */
function loopbackNetwork(origin: string, timeoutMs: number): INetworkModule {
  const secure = origin.replace(/^http:/, 'https:');
  const toWire = (url: string) => (url.startsWith(secure) ? origin + url.slice(secure.length) : url);
  const send = async <T>(url: string, init: RequestInit): Promise<NetworkResponse<T>> => {
    const res = await fetch(toWire(url), { ...init, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    const text = (await res.text()).split(origin).join(secure);
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k] = v));
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = { error: 'invalid_response', error_description: text.slice(0, 200) };
    }
    return { status: res.status, headers, body: body as T };
  };
  return {
    sendGetRequestAsync: (url, options) => send(url, { method: 'GET', headers: options?.headers ?? {} }),
    sendPostRequestAsync: (url, options) =>
      send(url, { method: 'POST', headers: options?.headers ?? {}, ...(options?.body === undefined ? {} : { body: options.body }) }),
  };
}

/** A token cache for one app registration (every mailbox of the entry shares it). */
export function graphTokens(entry: GraphEntry, cache: typeof createTokenCache = createTokenCache): TokenCache {
  const authority = new URL(entry.authority_url);
  const loopbackHttp = authority.protocol === 'http:';
  const base = loopbackHttp ? authority.origin.replace(/^http:/, 'https:') : authority.origin;
  const app = new ConfidentialClientApplication({
    auth: {
      clientId: entry.client_id,
      authority: `${base}${authority.pathname.replace(/\/$/, '')}/${entry.tenant_id}`,
      // Sovereign clouds and stand-ins are trusted as configured: no instance discovery at login.microsoftonline.com.
      knownAuthorities: [authority.host],
      ...credential(entry.auth),
    },
    system: {
      ...(loopbackHttp ? { networkClient: loopbackNetwork(authority.origin, entry.request_timeout_ms) } : {}),
      loggerOptions: { piiLoggingEnabled: false, loggerCallback: () => undefined },
    },
  });
  const scopes = [graphScope(entry.graph_url)];
  return cache(async ({ fresh }) => {
    let result;
    try {
      result = await app.acquireTokenByClientCredential({ scopes, skipCache: fresh });
    } catch (err) {
      const e = err as { errorCode?: string; errorMessage?: string; message?: string };
      const why = (e.errorMessage ?? e.message ?? String(err)).split('\n')[0];
      throw new GatewayError('MAILGATE_ERR_GRAPH_TOKEN', `the identity platform refused a token: ${e.errorCode ?? 'error'}: ${why}`, {
        cause: err,
      });
    }
    if (result === null || result.expiresOn === null)
      throw new GatewayError('MAILGATE_ERR_GRAPH_TOKEN', 'the identity platform answered without an access token');
    return { token: result.accessToken, expiresAt: result.expiresOn.getTime() };
  });
}
