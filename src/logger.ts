/**
 * pino JSON logs with secrets redacted at the source. Every log object, every child
 * binding and every message string goes through one redaction pass:
 * - values of secret-named keys at any depth (`token`, `pass`, `password`, `accessToken`,
 *   `refreshToken`, `clientSecret`, `authorization`, `api_keys`, … in any spelling:
 *   `access_token` and `Access-Token` match too) become "[REDACTED]";
 * - passwords in URL userinfo (`postgres://user:secret@host/db`) and `Bearer <token>`
 *   inside any string are replaced.
 * Components log through `logger.child({ adapter, account })`; tests pass `false`.
 */
import { hostname } from 'node:os';
import { pino, stdSerializers, stdTimeFunctions, type Bindings, type ChildLoggerOptions, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

export const REDACTED = '[REDACTED]';

/** Secret key names, compared lowercased with `_` and `-` removed. */
const SECRET_KEYS = new Set([
  'token', 'pass', 'password', 'passwd', 'secret', 'accesstoken', 'refreshtoken', 'idtoken', 'clientsecret',
  'authorization', 'proxyauthorization', 'cookie', 'setcookie', 'apikey', 'apikeys', 'xapikey', 'webhooksecret',
]);

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase().replace(/[_-]/g, ''));
}

const SECRET_QUERY_RE = /([?&](?:password|pass|token|access_token|secret|sslpassword|api_key)=)[^&#\s]*/gi;

/**
 * A URL with the password of its userinfo and secret query parameters replaced, e.g.
 * `postgres://mailgate:[REDACTED]@db:5432/mailgate`. Anything else is returned unchanged.
 */
export function redactUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/)([^:/?#@\s]*):([^/?#\s]*)@/i, `$1$2:${REDACTED}@`)
    .replace(SECRET_QUERY_RE, `$1${REDACTED}`);
}

const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)([^:/?#@\s]*):([^/?#\s]*)@/gi;
const BEARER_RE = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** Replaces URL passwords, secret query parameters and bearer/basic credentials inside free text. */
export function redactString(text: string): string {
  return text.replace(URL_USERINFO_RE, `$1$2:${REDACTED}@`).replace(SECRET_QUERY_RE, `$1${REDACTED}`).replace(BEARER_RE, `$1 ${REDACTED}`);
}

const MAX_DEPTH = 12;

function isPlainObject(v: object): v is Record<string, unknown> {
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** An error as pino's err serializer shows it, as a plain object (its own fields copied). */
const plainError = (e: Error): Record<string, unknown> => ({ ...stdSerializers.err(e) });

/** A copy of `value` with secrets redacted; class instances (Buffer, Date, Map, sockets…) pass as they are. */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH || seen.has(value)) return value;
  if (Array.isArray(value)) {
    seen.add(value);
    return value.map((v) => redactDeep(v, depth + 1, seen));
  }
  if (value instanceof Error) return redactDeep(plainError(value), depth, seen);
  if (!isPlainObject(value)) return value;
  seen.add(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null ? REDACTED : redactDeep(v, depth + 1, seen);
  }
  return out;
}

export interface LoggerOptions {
  /** Default `info`. */
  level?: LevelWithSilent;
  /** Where the JSON lines go. Default stdout. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Fields on every line. Default `{ name: 'mailgate', pid, hostname }`. */
  base?: Record<string, unknown>;
}

/** The root logger. `false` gives a logger that writes nothing (tests). */
export function createLogger(options: LoggerOptions | false = {}): Logger {
  if (options === false) return pino({ enabled: false });
  const redactRecord = (o: Record<string, unknown>) => redactDeep(o) as Record<string, unknown>;
  const serializeErr = (e: unknown) => redactDeep(e instanceof Error ? plainError(e) : e);
  const opts = {
    level: options.level ?? 'info',
    base: options.base ?? { name: 'mailgate', pid: process.pid, hostname: hostname() },
    timestamp: stdTimeFunctions.isoTime,
    formatters: {
      level: (label: string) => ({ level: label }),
      log: redactRecord,
    },
    serializers: { err: serializeErr, error: serializeErr },
    hooks: {
      logMethod(this: Logger, args: Parameters<Logger['info']>, method: (...a: unknown[]) => void) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? redactString(a) : a)));
      },
    },
  };
  const logger = options.destination === undefined ? pino(opts) : pino(opts, options.destination as DestinationStream);
  return redactingChildren(logger);
}

/**
 * pino's formatters do not see child bindings: child() is replaced on the root with one that
 * redacts them first. pino builds a child with Object.create(parent), so every descendant
 * inherits the replacement and keeps its parent's bindings (`this`).
 */
function redactingChildren(logger: Logger): Logger {
  const original = logger.child as unknown as (this: Logger, bindings: Bindings, options?: ChildLoggerOptions) => Logger;
  function guarded(this: Logger, bindings: Bindings, childOptions?: ChildLoggerOptions): Logger {
    return original.call(this, redactDeep(bindings) as Bindings, childOptions);
  }
  logger.child = guarded as unknown as Logger['child'];
  return logger;
}
