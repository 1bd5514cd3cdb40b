/**
 * The CLI on a real pseudo-terminal (util-linux `script`), so that stderr IS a TTY: pretty,
 * coloured log lines and the progress bar with its percentage; and JSON lines, no bar, when
 * stderr is a pipe.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeMbox } from '../crash/support.js';
import { MAIN, requireBuild, runMailgate } from './support/dist.js';

let dir: string;
let mbox: string;

beforeAll(() => {
  requireBuild();
  dir = mkdtempSync(join(tmpdir(), 'mailgate-tty-'));
  mbox = join(dir, 'in.mbox');
  writeMbox(mbox, 1500, 'tty');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs `mailgate ARGS` with stdout and stderr on a pseudo-terminal; resolves with everything the terminal received. */
function onTerminal(
  args: string[],
  options: { env?: Record<string, string>; stdoutTo?: string } = {},
): Promise<{ code: number | null; text: string }> {
  // A pseudo-terminal starts without a size: give it one wide enough for the bar and the counters.
  const mailgate = [process.execPath, MAIN, ...args].map(quote).join(' ') + (options.stdoutTo ? ` > ${quote(options.stdoutTo)}` : '');
  const command = `stty cols 240 rows 40 && ${mailgate}`;
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
    if (options.env?.['NO_COLOR'] === undefined) delete env['NO_COLOR'];
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (text += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (text += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, text }));
  });
}

// eslint-disable-next-line no-control-regex
const COLOUR = /\x1b\[\d+m/g;
const BAR = /\[[█░]{20}\] +\d{1,3}% {2}[\d.]+ [kMG]?B \/ [\d.]+ [kMG]?B {2}\d+ msg\/s {2}[\d.]+ [kMG]?B\/s {2}ETA [-:\d]+/;
const PRETTY_WARN =
  /^\d\d:\d\d:\d\d\.\d{3} WARN {2}NO api\.url CONFIGURED: delivering to the BUILT-IN EMULATOR at http:\/\/127\.0\.0\.1:\d+ .* emulatorUrl=http/m;

function importArgs(name: string): string[] {
  return ['import', mbox, '--source', `acme/${name}`, '--store', `sqlite:${join(dir, `${name}.db`)}`, '--workers', '1'];
}

describe('on a terminal', () => {
  it('import: pretty, coloured log lines and a progress bar with a percentage beside the counters', async () => {
    const run = await onTerminal(importArgs('pretty'));
    expect(run.code, run.text).toBe(0);
    // eslint-disable-next-line no-control-regex
    expect(run.text).toMatch(/\x1b\[33mWARN \x1b\[0m/);
    // eslint-disable-next-line no-control-regex
    const lines = run.text.replace(COLOUR, '').split(/\r?\n|\r\x1b\[2K/);
    expect(lines.join('\n')).toMatch(PRETTY_WARN);
    const frames = lines.filter((l) => BAR.test(l));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.at(-1)).toMatch(/ {2}\| {2}AI units \d+ · read \d+ · parsed \d+ · queued \d+/);
    expect(run.text).toContain('import into route import: read 1500  parsed 1500');
    expect(run.text).not.toMatch(/^\{"level"/m);
  }, 120_000);

  it('NO_COLOR keeps the pretty lines and drops the colours; --log-format json gives JSON on a terminal too', async () => {
    const plain = await onTerminal(importArgs('nocolor'), { env: { NO_COLOR: '1' } });
    expect(plain.code, plain.text).toBe(0);
    expect(plain.text).not.toMatch(COLOUR);
    expect(plain.text).toMatch(PRETTY_WARN);
    const json = await onTerminal([...importArgs('json'), '--log-format', 'json']);
    expect(json.code, json.text).toBe(0);
    expect(json.text).toMatch(/^\{"level":"warn","time":"[^"]+",.*"msg":"NO api\.url CONFIGURED/m);
  }, 120_000);

  it('preview: a progress bar on stderr while stdout goes to a file', async () => {
    const run = await onTerminal(['preview', mbox, '--workers', '1', '--format', 'jsonl'], { stdoutTo: join(dir, 'preview.jsonl') });
    expect(run.code, run.text).toBe(0);
    const frames = run.text.split('\r\x1b[2K').filter((l) => BAR.test(l));
    expect(frames.length).toBeGreaterThan(0);
    expect(frames.at(-1)).toMatch(/^\[█{20}\] 100% .* {2}\| {2}read 1500 {2}failed 0$/);
  }, 120_000);
});

describe('not on a terminal', () => {
  it('import writes JSON log lines and no progress bar', async () => {
    const run = await runMailgate(importArgs('pipe'), { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    const records = run.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.some((r) => r['level'] === 'warn' && String(r['msg']).startsWith('NO api.url CONFIGURED'))).toBe(true);
    expect(run.stderr).not.toContain('\x1b');
    expect(run.stderr).not.toMatch(BAR);
    expect(run.stderr).toContain('import into route import: read 1500  parsed 1500');
  }, 120_000);

  it('--log-format pretty gives pretty lines without colours in a pipe', async () => {
    const run = await runMailgate([...importArgs('pipe-pretty'), '--log-format', 'pretty'], { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(PRETTY_WARN);
    expect(run.stderr).not.toContain('\x1b');
  }, 120_000);
});
