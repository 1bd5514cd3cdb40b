/**
 * pino JSON logs with secrets redacted at the source. Every log object, every child
 * binding and every message string goes through one redaction pass:
 * - values of secret-named keys at any depth (`token`, `pass`, `password`, `accessToken`,
 *   `refreshToken`, `clientSecret`, `authorization`, `api_keys`, … in any spelling:
 *   `access_token` and `Access-Token` match too) become "[REDACTED]";
 * - passwords in URL userinfo (`postgres://user:secret@host/db`), credential parameters of
 *   query strings and form bodies (`client_secret=`, `refresh_token=`, `code=`, …) and
 *   `Bearer <token>` inside any string are replaced; URL objects likewise;
 * - class instances are redacted as their JSON form; values nested deeper than 12 levels
 *   become "[TOO DEEP]".
 * Components log through `logger.child({ adapter, instance })` (IMAP and webhooks add `account`, uploads `endpoint`, the
 * names they logged before); tests pass `false`.
 * Two formats: JSON lines (the default) and, for people on a terminal, one pretty line per
 * record (src/log-pretty.ts), formatted from the redacted JSON line. Line separators and bidi
 * controls are escaped in both (src/line-safe.ts).
 */
import { hostname } from 'node:os';
import {
  pino,
  stdSerializers,
  stdTimeFunctions,
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type Logger,
  type LevelWithSilent,
} from 'pino';
import { escapeLineAndBidi } from './line-safe.js';
import { prettyDestination, type LogFormat } from './log-pretty.js';

export type { Logger };

export const REDACTED = '[REDACTED]';

/** Secret key names, compared lowercased with `_` and `-` removed. */
const SECRET_KEYS = new Set([
  'token',
  'pass',
  'password',
  'passwd',
  'secret',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'clientsecret',
  'authorization',
  'proxyauthorization',
  'cookie',
  'setcookie',
  'apikey',
  'apikeys',
  'xapikey',
  'webhooksecret',
]);

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase().replace(/[_-]/g, ''));
}

/**
 * Credential parameters in a query string, a form body or free text (`a=1&client_secret=x`,
 * `?code=…`, `password=…; token=…`): a parameter starts the string or follows `?`, `&`, `;`,
 * whitespace or a quote, and its value runs to the next `&`, `#`, `;`, quote or whitespace.
 * `code` is the OAuth authorization code (so a free-text `code=42` is redacted too).
 */
const SECRET_PARAMS =
  'password|passwd|pass|token|access_token|refresh_token|id_token|client_secret|secret|sslpassword|sslkey|api_key|apikey|key|auth|' +
  'private_key|secret_key|access_key|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token|code';
const SECRET_QUERY_RE = new RegExp(`((?:^|[?&;\\s"'])(?:${SECRET_PARAMS})=)[^&#;\\s"']*`, 'gi');

/**
 * A URL with the password of its userinfo and secret query parameters replaced, e.g.
 * `postgres://mailgate:[REDACTED]@db:5432/mailgate`. Anything else is returned unchanged.
 */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^:/?#@\s]*):([^/?#\s]*)@/i, `$1$2:${REDACTED}@`).replace(SECRET_QUERY_RE, `$1${REDACTED}`);
}

const URL_USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)([^:/?#@\s]*):([^/?#\s]*)@/gi;
const BEARER_RE = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g;

/** Replaces URL passwords, secret query parameters and bearer/basic credentials inside free text. */
export function redactString(text: string): string {
  return text.replace(URL_USERINFO_RE, `$1$2:${REDACTED}@`).replace(SECRET_QUERY_RE, `$1${REDACTED}`).replace(BEARER_RE, `$1 ${REDACTED}`);
}

/** Deeper values are replaced by TOO_DEEP, never passed on unredacted. */
const MAX_DEPTH = 12;
export const TOO_DEEP = '[TOO DEEP]';
const CIRCULAR = '[Circular]';

/** Values whose JSON form holds no field of their own: passed as they are. */
function isOpaque(v: object): boolean {
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || v instanceof Date || v instanceof RegExp) return true;
  return v instanceof Map || v instanceof Set || v instanceof WeakMap || v instanceof WeakSet || v instanceof Promise;
}

/** The fields a value shows in JSON: its toJSON() result, else its own enumerable fields. */
function jsonFields(v: object): unknown {
  const toJSON = (v as { toJSON?: unknown }).toJSON;
  return typeof toJSON === 'function' ? (toJSON as () => unknown).call(v) : v;
}

/** An error as pino's err serializer shows it, as a plain object (its own fields copied). */
const plainError = (e: Error): Record<string, unknown> => ({ ...stdSerializers.err(e) });

/**
 * A copy of `value` with secrets redacted. Class instances are copied as JSON would show them
 * (toJSON(), else their own enumerable fields), so a secret field of a custom object or an
 * Error subclass is redacted too; binary data, dates, maps and sets pass as they are. URL
 * objects become their redacted href; a cycle becomes "[Circular]".
 */
export function redactDeep(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return redactString(value);
  if (value === null || typeof value !== 'object') return value;
  if (seen.has(value)) return CIRCULAR;
  if (depth > MAX_DEPTH) return TOO_DEEP;
  if (value instanceof URL) return redactUrl(value.href);
  if (Array.isArray(value)) {
    seen.add(value);
    return value.map((v) => redactDeep(v, depth + 1, seen));
  }
  if (value instanceof Error) return redactDeep(plainError(value), depth, seen);
  if (isOpaque(value)) return value;
  seen.add(value);
  const fields = jsonFields(value);
  if (fields !== value) return redactDeep(fields, depth + 1, seen);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && v !== undefined && v !== null ? REDACTED : redactDeep(v, depth + 1, seen);
  }
  return out;
}

export interface LoggerOptions {
  /** Default `info`. */
  level?: LevelWithSilent;
  /** Where the lines go. Default stdout. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** `json` (default) or `pretty` (one line per record for people; see resolveLogFormat). */
  format?: LogFormat;
  /** Pretty format: ANSI colours (see useColors). Default false. */
  colors?: boolean;
  /** Fields on every line. Default `{ name: 'mailgate', pid, hostname }`. */
  base?: Record<string, unknown>;
  /**
   * Serializers of fields of the object a log call passes, applied before redaction (pino's own
   * `serializers` would see the redacted copy, in which a class instance such as a request is
   * already reduced to its JSON form). What they return is redacted like any field.
   */
  fields?: Record<string, (value: never) => unknown>;
}

/** The log call's object with `fields` serializers applied (a copy; anything else as it is). */
function serializeFields(arg: unknown, fields: LoggerOptions['fields']): unknown {
  if (fields === undefined || typeof arg !== 'object' || arg === null || arg instanceof Error) return arg;
  const out: Record<string, unknown> = { ...(arg as Record<string, unknown>) };
  for (const [key, serialize] of Object.entries(fields)) if (out[key] !== undefined) out[key] = serialize(out[key] as never);
  return out;
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
        method.apply(
          this,
          args.map((a, i) => (typeof a === 'string' ? redactString(a) : i === 0 ? serializeFields(a, options.fields) : a)),
        );
      },
      // U+2028/U+2029 and bidi controls from mail as \u escapes: one record stays one line for
      // every line reader, and no text is reordered (the same value for a JSON reader).
      streamWrite: escapeLineAndBidi,
    },
  };
  const destination = destinationOf(options, opts.level);
  const logger = destination === undefined ? pino(opts) : pino(opts, destination);
  return redactingChildren(logger);
}

/** Debug and trace show error stacks in the pretty format; the other levels only code and message. */
const STACK_LEVELS = new Set<string>(['debug', 'trace']);

function destinationOf(options: LoggerOptions, level: LevelWithSilent): DestinationStream | undefined {
  const out = options.destination as DestinationStream | undefined;
  if (options.format !== 'pretty') return out;
  const colors = options.colors === true;
  return prettyDestination(out ?? (process.stdout as unknown as DestinationStream), { colors, stacks: STACK_LEVELS.has(level) });
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
