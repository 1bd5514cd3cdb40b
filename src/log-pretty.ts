/**
 * Log lines for people on a terminal: one line per record,
 * `HH:MM:SS.mmm LEVEL component/adapter message key=value …`.
 * It formats the JSON line pino has already built, so whatever the logger redacted (secret
 * keys, URL passwords, bearer tokens) is redacted here too: this module never sees a secret.
 * Values are shortened and control characters escaped, so that a header read from mail cannot
 * move the cursor or recolour the terminal.
 */
import type { DestinationStream } from 'pino';

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
/** `auto`: pretty when the log stream is a terminal, JSON otherwise. */
export type LogFormatChoice = LogFormat | 'auto';

export interface PrettyOptions {
  /** ANSI colours (only for a terminal with NO_COLOR unset: see useColors). */
  colors: boolean;
  /** Error stacks on the lines after the record (the logger is at debug or trace). */
  stacks: boolean;
  /** Values longer than this many characters end with `…`. Default 120. */
  maxValueChars?: number;
}

export const DEFAULT_MAX_VALUE_CHARS = 120;

type Stream = { isTTY?: boolean };

/** The format a choice means for a stream: `auto` is pretty on a terminal, JSON elsewhere. */
export function resolveLogFormat(choice: LogFormatChoice | undefined, stream: Stream): LogFormat {
  if (choice === 'json' || choice === 'pretty') return choice;
  return stream.isTTY === true ? 'pretty' : 'json';
}

/** Colours only on a terminal, and never when NO_COLOR is set to anything but the empty string (no-color.org). */
export function useColors(stream: Stream, env: Record<string, string | undefined>): boolean {
  const noColor = env['NO_COLOR'];
  return stream.isTTY === true && (noColor === undefined || noColor === '');
}

const LEVELS: Record<string, { label: string; color: number }> = {
  trace: { label: 'TRACE', color: 90 },
  debug: { label: 'DEBUG', color: 36 },
  info: { label: 'INFO ', color: 32 },
  warn: { label: 'WARN ', color: 33 },
  error: { label: 'ERROR', color: 31 },
  fatal: { label: 'FATAL', color: 35 },
};

/** pino's own fields and the ones shown in the line's head: not repeated as key=value. */
const HEAD_KEYS = new Set(['time', 'level', 'msg', 'pid', 'hostname', 'name', 'component', 'adapter', 'instance', 'account', 'v']);
const ERROR_KEYS = new Set(['err', 'error']);

// Control characters, line and paragraph separators and bidi controls (src/line-safe.ts).
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Bidi_Control}]/gu;
// eslint-disable-next-line no-control-regex
const HAS_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Bidi_Control}]/u;
const ESCAPES: Record<string, string> = { '\n': '\\n', '\t': '\\t', '\r': '\\r' };

/**
 * Control characters as visible escapes (`\n`, `\u001b`, `\u202e`): one record stays one line, no
 * escape sequence reaches the terminal, and no bidi override reverses the rest of the line.
 */
function escapeControls(text: string): string {
  return text.replace(CONTROL_RE, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

const paint = (on: boolean, code: number, text: string): string => (on ? `\x1b[${code}m${text}\x1b[0m` : text);

function clock(time: unknown): string {
  const d = typeof time === 'string' || typeof time === 'number' ? new Date(time) : new Date(NaN);
  if (Number.isNaN(d.getTime())) return '--:--:--.---';
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** `key=value`: plain words as they are, anything with spaces, quotes or `=` as JSON. */
function valueText(value: unknown, max: number): string {
  if (typeof value === 'string') {
    const plain = /^[^\s"'=]+$/.test(value) && !HAS_CONTROL.test(value);
    return escapeControls(shorten(plain ? value : JSON.stringify(value), max));
  }
  if (value === undefined) return 'undefined';
  // Durations and rates for people: three decimals are plenty.
  if (typeof value === 'number' && !Number.isInteger(value)) return String(Math.round(value * 1000) / 1000);
  return escapeControls(shorten(JSON.stringify(value) ?? String(value), max));
}

/** The source of a record: `component/adapter/instance`, whichever the child bindings set. */
function source(record: Record<string, unknown>): string {
  const parts = [record['component'], record['adapter'], record['instance'] ?? record['account']];
  return parts.filter((p) => typeof p === 'string' || typeof p === 'number').join('/');
}

interface ErrorShape {
  code?: unknown;
  message?: unknown;
  type?: unknown;
  stack?: unknown;
}

/** `code: message` of a serialized error (the message left out when the record's message already is it). */
function errorText(err: ErrorShape, msg: string, max: number): string {
  const code = typeof err.code === 'string' || typeof err.code === 'number' ? String(err.code) : undefined;
  const message = typeof err.message === 'string' && err.message !== msg ? err.message : undefined;
  const head = code ?? (typeof err.type === 'string' ? err.type : undefined);
  const text = [head, message].filter((p) => p !== undefined).join(': ');
  return valueText(text === '' ? 'error' : text, max);
}

/** One record as a line (and, with stacks on, the stacks of its errors on indented lines after it). */
export function formatRecord(record: Record<string, unknown>, options: PrettyOptions): string {
  const max = options.maxValueChars ?? DEFAULT_MAX_VALUE_CHARS;
  const c = options.colors;
  const level = LEVELS[String(record['level'])] ?? { label: String(record['level']).toUpperCase().padEnd(5), color: 37 };
  const msg = typeof record['msg'] === 'string' ? record['msg'] : '';
  const head = [paint(c, 90, clock(record['time'])), paint(c, level.color, level.label)];
  const from = source(record);
  if (from !== '') head.push(paint(c, 36, escapeControls(shorten(from, max))));
  if (msg !== '') head.push(escapeControls(msg));
  const pairs: string[] = [];
  const stacks: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (HEAD_KEYS.has(key)) continue;
    if (ERROR_KEYS.has(key) && typeof value === 'object' && value !== null) {
      const err = value as ErrorShape;
      pairs.push(`${paint(c, 90, `${key}=`)}${paint(c, 31, errorText(err, msg, max))}`);
      if (options.stacks && typeof err.stack === 'string') stacks.push(err.stack);
      continue;
    }
    pairs.push(`${paint(c, 90, `${escapeControls(key)}=`)}${valueText(value, max)}`);
  }
  const line = [...head, ...pairs].join(' ');
  const tail = stacks.flatMap((s) => s.split('\n').map((l) => `    ${escapeControls(l.trim())}`));
  return [line, ...tail].join('\n');
}

/**
 * A pino destination writing each record as a pretty line to `out`. A line that is not a JSON
 * object (it should not happen) is passed on unchanged.
 */
export function prettyDestination(out: { write(text: string): unknown }, options: PrettyOptions): DestinationStream {
  return {
    write(line: string): void {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        out.write(line);
        return;
      }
      if (typeof record !== 'object' || record === null || Array.isArray(record)) {
        out.write(line);
        return;
      }
      out.write(`${formatRecord(record as Record<string, unknown>, options)}\n`);
    },
  };
}
