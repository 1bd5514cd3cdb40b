/**
 * What stands between a listener and a hostile client before any endpoint runs: timeouts on
 * every connection (a slow or silent client cannot hold one forever), the Host check of a
 * loopback listener (a DNS-rebinding page names its own host), and the preview endpoints'
 * concurrency bound. Limits come in validated; docs/security.md lists each with its default.
 */
import type { ServerOptions as HttpServerOptions } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { parseLimit } from '../limits.js';
import { GatewayError } from '../errors.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { httpError } from './errors.js';

export interface ListenerTimeouts {
  /** Whole request (headers and body), in ms. */
  request_timeout_ms?: number;
  /** Request headers, in ms; at most request_timeout_ms. */
  headers_timeout_ms?: number;
  /** No bytes either way for this long closes the socket, in ms. */
  idle_timeout_ms?: number;
  /** An idle keep-alive connection waits this long for its next request, in ms. */
  keep_alive_timeout_ms?: number;
}

/** The fastify options that set them (fastify's own defaults leave request and idle time unbounded). */
export function listenerOptions(t: ListenerTimeouts, prefix = 'server.') {
  const requestTimeout = parseLimit(`${prefix}request_timeout_ms`, t.request_timeout_ms, SERVER_DEFAULTS.request_timeout_ms);
  const headersTimeout = parseLimit(
    `${prefix}headers_timeout_ms`,
    t.headers_timeout_ms,
    Math.min(SERVER_DEFAULTS.headers_timeout_ms, requestTimeout),
  );
  if (headersTimeout > requestTimeout) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${prefix}headers_timeout_ms (${headersTimeout}) must not exceed ${prefix}request_timeout_ms (${requestTimeout})`,
    );
  }
  const connectionTimeout = parseLimit(`${prefix}idle_timeout_ms`, t.idle_timeout_ms, SERVER_DEFAULTS.idle_timeout_ms);
  const keepAliveTimeout = parseLimit(`${prefix}keep_alive_timeout_ms`, t.keep_alive_timeout_ms, SERVER_DEFAULTS.keep_alive_timeout_ms);
  // Node checks the header and request deadlines on this interval (30 s by default): a quarter
  // of the shorter deadline keeps a cut within a quarter late, and never busier than every 50 ms.
  const connectionsCheckingInterval = Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4)));
  const http: HttpServerOptions = { headersTimeout, requestTimeout, connectionsCheckingInterval };
  return { requestTimeout, connectionTimeout, keepAliveTimeout, http };
}

function splitHost(value: string): { name: string; port: string | undefined } {
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(value.trim().toLowerCase());
  return m ? { name: m[1]!, port: m[2] } : { name: '', port: undefined };
}

const LOCAL_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Whether a loopback listener answers a request with this Host header: `localhost`,
 * `127.0.0.1`, `[::1]` with the listener's port (bare when it is 80), or an entry of
 * `allowed`: `host` (any port) or `host:port`. `port` undefined (no socket): any port.
 */
export function hostAllowed(header: string | undefined, port: number | undefined, allowed: readonly string[]): boolean {
  if (header === undefined || header === '') return false;
  const { name, port: given } = splitHost(header);
  const portOk = port === undefined || given === String(port) || (given === undefined && port === 80);
  if (LOCAL_NAMES.includes(name) && portOk) return true;
  return allowed.some((entry) => {
    const e = splitHost(entry);
    return e.name === name && (e.port === undefined || e.port === given);
  });
}

/** onRequest hook of a loopback listener; routes with `config: { anyHost: true }` (signed push endpoints) are exempt. */
export function hostGuard(allowed: readonly string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    if ((request.routeOptions.config as { anyHost?: boolean } | undefined)?.anyHost === true) return;
    if (hostAllowed(request.headers.host, request.socket?.localPort, allowed)) return;
    throw httpError(
      'MAILGATE_ERR_SERVER_MISDIRECTED',
      'This server listens on a loopback address and answers to localhost, 127.0.0.1 or [::1] with its port; ' +
        'add other names to server.allowed_hosts.',
    );
  };
}

/**
 * At most `max` requests of a route group at once, counted from the first byte (before the
 * body is read) to the response or the client going away; more are answered 503 with
 * Retry-After at once.
 */
export function concurrencyGate(max: number, retryAfterS = 1) {
  let running = 0;
  const holding = new WeakSet<FastifyRequest>();
  const release = async (request: FastifyRequest): Promise<void> => {
    if (holding.delete(request)) running--;
  };
  const acquire = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (running >= max) {
      void reply.header('retry-after', String(retryAfterS));
      throw httpError('MAILGATE_ERR_SERVER_BUSY', `${max} preview requests are being answered; retry in ${retryAfterS} s.`);
    }
    running++;
    holding.add(request);
  };
  return { acquire, release, running: () => running };
}
