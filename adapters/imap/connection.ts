/**
 * Opening and ending one IMAP connection. Opening (the token request, TCP, greeting, login)
 * is bounded by `command_timeout_ms` and ends at once when the service's signal aborts;
 * ending logs out within a short bound, then closes the socket whatever the server does.
 */
import { ImapFlow } from 'imapflow';
import { GatewayError } from '../../src/errors.js';
import { isLoopbackHost } from '../../src/net.js';
import type { ImapAccountConfig } from './config.js';
import type { TokenProvider } from './oauth.js';
import type { ConnectionPacer } from '../../src/pipeline/pacer.js';
import { classify, withDeadline } from './retry.js';

/**
 * imapflow starts IDLE after this much inactivity on a selected folder: between the steps of a
 * sync. A session that waits for mail starts IDLE at once (session.ts idleNow).
 */
export const AUTO_IDLE_DELAY_MS = 1000;
/** How long a LOGOUT may take at shutdown before the socket is closed anyway. */
export const LOGOUT_MS = 2000;

export interface OpenOptions {
  config: ImapAccountConfig;
  tokens: TokenProvider | undefined;
  signal: AbortSignal;
  /** Paces attempts across the accounts of the process; waiting for it does not count against the deadline. */
  pacer: ConnectionPacer;
  /** imapflow's auto-IDLE delay (default AUTO_IDLE_DELAY_MS). */
  autoIdleDelayMs?: number;
  /** Keeps a socket error of this client (an 'error' without a listener would crash the process). */
  onSocketError: (client: ImapFlow, err: Error) => void;
}

type Credentials = { user: string; pass: string } | { user: string; accessToken: string };

async function credentials(config: ImapAccountConfig, tokens: TokenProvider | undefined, signal: AbortSignal): Promise<Credentials> {
  const auth = config.auth;
  if ('pass' in auth) return { user: auth.user, pass: auth.pass };
  return { user: auth.user, accessToken: await (tokens as TokenProvider).getToken(signal) };
}

/**
 * imapflow's `doSTARTTLS`: with `secure: false`, STARTTLS is required (true: no login in clear
 * when the server, or someone on the path, hides the capability) unless the host is loopback
 * or the account allows plaintext by name; then it is used when offered (undefined).
 */
export function startTlsMode(config: Pick<ImapAccountConfig, 'host' | 'secure' | 'allow_plaintext'>): true | undefined {
  if (config.secure) return undefined;
  return isLoopbackHost(config.host) || config.allow_plaintext ? undefined : true;
}

function newClient(config: ImapAccountConfig, auth: Credentials, autoIdleDelay: number): ImapFlow {
  const doSTARTTLS = startTlsMode(config);
  return new ImapFlow({
    host: config.host,
    port: config.port,
    secure: config.secure,
    ...(doSTARTTLS === undefined ? {} : { doSTARTTLS }),
    auth,
    logger: false,
    clientInfo: { name: 'mailgate' },
    disableAutoIdle: !config.idle,
    autoIdleDelay,
    maxIdleTime: Math.min(config.idle_watchdog_ms * 2, 1_500_000),
    connectionTimeout: Math.min(config.command_timeout_ms, 90_000),
  });
}

function abortedError(config: ImapAccountConfig): GatewayError {
  return new GatewayError('MAILGATE_ERR_IMAP_CONNECTION', `connection to ${config.host}:${config.port} abandoned: the service is stopping`);
}

/** One attempt: connect and log in, or reject (at once when `signal` aborts). */
async function attempt(opts: OpenOptions, client: ImapFlow): Promise<void> {
  const { config, signal } = opts;
  client.on('error', (err: Error) => opts.onSocketError(client, err));
  const stop = (): void => client.close();
  signal.addEventListener('abort', stop, { once: true });
  try {
    await withDeadline(client.connect(), config.command_timeout_ms, 'connect', () => client.close());
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

/**
 * A connected, logged-in client. An OAuth2 token the server refuses may be revoked or expired
 * early: a new one is requested once. Rejects with a GatewayError naming the failure. Each
 * attempt holds a permit of the process's pacer from the token request to the end of the login.
 */
export async function openConnection(opts: OpenOptions): Promise<ImapFlow> {
  const { config, signal } = opts;
  for (let retry = 0; ; retry++) {
    if (signal.aborted) throw abortedError(config);
    const release = await opts.pacer.acquire(signal).catch(() => Promise.reject(abortedError(config)));
    try {
      const client = await tryOnce(opts, retry);
      if (client !== undefined) return client;
    } finally {
      release();
    }
  }
}

/** One paced attempt: the client, or undefined when a refused OAuth2 token is worth one more try. */
async function tryOnce(opts: OpenOptions, retry: number): Promise<ImapFlow | undefined> {
  const { config, tokens, signal } = opts;
  const client = newClient(config, await credentials(config, tokens, signal), opts.autoIdleDelayMs ?? AUTO_IDLE_DELAY_MS);
  if (signal.aborted) throw abortedError(config);
  try {
    await attempt(opts, client);
    return client;
  } catch (err) {
    client.close();
    if (signal.aborted) throw abortedError(config);
    const failure = classify(err, client.byeReason);
    if (failure.kind === 'auth' && tokens !== undefined && retry === 0 && !(err instanceof GatewayError)) {
      tokens.invalidate();
      return undefined;
    }
    if (err instanceof GatewayError) throw err;
    const message =
      failure.kind === 'auth'
        ? `IMAP login refused for ${config.auth.user}: ${failure.message}`
        : `IMAP connect to ${config.host}:${config.port} failed: ${failure.message}${client.byeReason ? ` (${client.byeReason})` : ''}`;
    throw new GatewayError(failure.code, message, {
      cause: err,
      ...(failure.hintMs === undefined ? {} : { details: { hintMs: failure.hintMs } }),
    });
  }
}

/**
 * Logs out (queued behind a command in flight, at most `ms`), then closes the socket. Resolves
 * with whether the server acknowledged the LOGOUT; never rejects.
 */
export async function endConnection(client: ImapFlow, ms = LOGOUT_MS): Promise<boolean> {
  try {
    if (!client.usable || client.authenticated === false) return false;
    await withDeadline(client.logout(), ms, 'LOGOUT', () => client.close());
    return true;
  } catch {
    return false;
  } finally {
    client.close();
  }
}
