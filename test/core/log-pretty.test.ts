/** The pretty log format: fields, levels, errors, shortening, colours, and redaction in both formats. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { formatRecord, prettyDestination, resolveLogFormat, useColors, type LogFormat } from '../../src/log-pretty.js';
import { createLogger, REDACTED } from '../../src/logger.js';

const TIME = '2024-05-06T09:08:07.065Z';
/** The clock part as the formatter shows it: local time of the record. */
function clockOf(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}
const plain = { colors: false, stacks: false };
const ESC = '\x1b[';

function logged(format: LogFormat, write: (logger: ReturnType<typeof createLogger>) => void, level: 'info' | 'debug' = 'info'): string {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString('utf8'));
      cb();
    },
  });
  write(createLogger({ level, destination, format }));
  return chunks.join('');
}

describe('formatRecord', () => {
  it('writes time, level, source, message and the other fields as key=value on one line', () => {
    const line = formatRecord(
      {
        level: 'warn',
        time: TIME,
        pid: 42,
        hostname: 'h',
        name: 'mailgate',
        component: 'delivery',
        adapter: 'imap',
        account: 'support',
        msg: 'route paused',
        route: 'support',
        pauseMs: 30000,
        ok: false,
        note: 'two words',
        list: ['a', 'b'],
        responseTime: 3.0751759,
      },
      plain,
    );
    expect(line).toBe(
      `${clockOf(TIME)} WARN  delivery/imap/support route paused route=support pauseMs=30000 ok=false note="two words" list=["a","b"] responseTime=3.075`,
    );
  });

  it('names every level in five columns', () => {
    const labels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'].map((level) =>
      formatRecord({ level, time: TIME, msg: 'm' }, plain),
    );
    expect(labels.map((l) => l.slice(13, 18))).toEqual(['TRACE', 'DEBUG', 'INFO ', 'WARN ', 'ERROR', 'FATAL']);
    expect(labels.every((l) => l.endsWith(' m'))).toBe(true);
  });

  it('shows an error as code and message, its stack only when asked (debug)', () => {
    const err = {
      type: 'GatewayError',
      code: 'MAILGATE_ERR_API_TIMEOUT',
      message: 'no answer in 30000 ms',
      stack: 'Error: x\n    at f (a.js:1:1)',
    };
    const record = { level: 'error', time: TIME, msg: 'delivery failed', err };
    expect(formatRecord(record, plain)).toBe(
      `${clockOf(TIME)} ERROR delivery failed err="MAILGATE_ERR_API_TIMEOUT: no answer in 30000 ms"`,
    );
    expect(formatRecord(record, { colors: false, stacks: true }).split('\n')).toEqual([
      `${clockOf(TIME)} ERROR delivery failed err="MAILGATE_ERR_API_TIMEOUT: no answer in 30000 ms"`,
      '    Error: x',
      '    at f (a.js:1:1)',
    ]);
    // logger.error(err) makes the error's message the record's message: it is not repeated.
    const same = formatRecord({ level: 'error', time: TIME, msg: 'boom', err: { type: 'Error', message: 'boom' } }, plain);
    expect(same).toBe(`${clockOf(TIME)} ERROR boom err=Error`);
  });

  it('shortens long values and escapes control characters (one record, one line; no escape sequence from mail)', () => {
    const line = formatRecord({ level: 'info', time: TIME, msg: 'a\nb\x1b[31m', subject: 'x'.repeat(500), raw: 'p\x1b]0;t\x07' }, plain);
    expect(line).not.toContain('\n');
    expect(line).not.toContain('\x1b');
    expect(line).not.toContain('\x07');
    expect(line).toContain('a\\nb\\u001b[31m');
    expect(line).toContain(`subject=${'x'.repeat(119)}…`);
    expect(line).toContain('raw="p\\u001b]0;t\\u0007"');
    expect(formatRecord({ level: 'info', time: TIME, msg: 'm', big: { a: 'y'.repeat(300) } }, { ...plain, maxValueChars: 20 })).toMatch(
      /big=\{"a":"y{13}…$/,
    );
  });

  it('colours level, time and keys only when asked', () => {
    const record = { level: 'error', time: TIME, component: 'server', msg: 'm', k: 1 };
    const coloured = formatRecord(record, { colors: true, stacks: false });
    expect(coloured).toContain(`${ESC}31mERROR${ESC}0m`);
    expect(coloured).toContain(`${ESC}36mserver${ESC}0m`);
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\x1b\[\d+m/g, '')).toBe(formatRecord(record, plain));
    expect(formatRecord(record, plain)).not.toContain(ESC);
  });
});

describe('prettyDestination', () => {
  it('formats JSON lines and passes anything else on unchanged', () => {
    const out: string[] = [];
    const d = prettyDestination({ write: (t: string) => out.push(t) }, plain);
    d.write(`${JSON.stringify({ level: 'info', time: TIME, msg: 'hello' })}\n`);
    d.write('not json\n');
    expect(out).toEqual([`${clockOf(TIME)} INFO  hello\n`, 'not json\n']);
  });
});

describe('createLogger formats', () => {
  it('json stays the default: one JSON object per line', () => {
    const text = logged('json', (l) => l.child({ component: 'delivery' }).warn({ route: 'r' }, 'paused'));
    const record = JSON.parse(text) as Record<string, unknown>;
    expect(record).toMatchObject({ level: 'warn', component: 'delivery', route: 'r', msg: 'paused' });
  });

  it('pretty writes one readable line per record', () => {
    const text = logged('pretty', (l) => {
      l.child({ component: 'delivery' }).warn({ route: 'r' }, 'paused');
      l.info('second');
    });
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}delivery paused route=r$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}second$/);
  });

  it('redacts secrets in both formats: secret keys, bindings, URL passwords, bearer tokens, error fields', () => {
    for (const format of ['json', 'pretty'] as const) {
      const text = logged(format, (l) => {
        const child = l.child({ adapter: 'imap', auth: { user: 'u', pass: 'PASS-SECRET' } });
        child.warn({ token: 'TOKEN-SECRET', url: 'postgres://app:DB-SECRET@db/mail' }, 'with Bearer BEARER-SECRET');
        const err = Object.assign(new GatewayError('MAILGATE_ERR_API_UNAUTHORIZED', 'refused'), { apiKey: 'KEY-SECRET' });
        child.error({ err }, 'client_secret=CS-SECRET in text');
      });
      for (const secret of ['PASS-SECRET', 'TOKEN-SECRET', 'DB-SECRET', 'BEARER-SECRET', 'KEY-SECRET', 'CS-SECRET'])
        expect(text, `${format}: ${secret}`).not.toContain(secret);
      expect(text).toContain(REDACTED);
    }
    const pretty = logged('pretty', (l) => l.warn({ token: 'T', url: 'postgres://app:S@db/mail' }, 'x'));
    expect(pretty).toContain(`token=${REDACTED}`);
    expect(pretty).toContain(`url=postgres://app:${REDACTED}@db/mail`);
  });

  it('field serializers see the live value, and what they return is redacted too', () => {
    class Request {
      constructor(private readonly secretUrl: string) {}
      get url(): string {
        return this.secretUrl;
      }
    }
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        chunks.push(chunk.toString('utf8'));
        cb();
      },
    });
    const logger = createLogger({ destination, fields: { req: (r: Request) => ({ url: r.url }) } });
    logger.child({ component: 'x' }).info({ req: new Request('/cb?code=CODE-SECRET&page=2') }, 'incoming');
    const record = JSON.parse(chunks.join('')) as { req: { url: string } };
    expect(record.req).toEqual({ url: `/cb?code=${REDACTED}&page=2` });
  });

  it('pretty shows stacks at debug only', () => {
    const err = new GatewayError('MAILGATE_ERR_API_TIMEOUT', 'slow');
    const atInfo = logged('pretty', (l) => l.error({ err }, 'failed'));
    const atDebug = logged('pretty', (l) => l.error({ err }, 'failed'), 'debug');
    expect(atInfo.trimEnd().split('\n')).toHaveLength(1);
    expect(atInfo).toContain('err="MAILGATE_ERR_API_TIMEOUT: slow"');
    expect(atDebug.trimEnd().split('\n').length).toBeGreaterThan(1);
    expect(atDebug).toMatch(/\n {4}at /);
  });
});

describe('format and colour choice', () => {
  it('auto is pretty on a terminal and JSON elsewhere; an explicit choice wins', () => {
    expect(resolveLogFormat(undefined, { isTTY: true })).toBe('pretty');
    expect(resolveLogFormat('auto', { isTTY: true })).toBe('pretty');
    expect(resolveLogFormat('auto', {})).toBe('json');
    expect(resolveLogFormat(undefined, { isTTY: false })).toBe('json');
    expect(resolveLogFormat('json', { isTTY: true })).toBe('json');
    expect(resolveLogFormat('pretty', {})).toBe('pretty');
  });

  it('colours only on a terminal without NO_COLOR (an empty NO_COLOR does not count)', () => {
    expect(useColors({ isTTY: true }, {})).toBe(true);
    expect(useColors({ isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(useColors({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColors({}, {})).toBe(false);
  });
});
