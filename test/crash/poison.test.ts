/**
 * Poison messages: one whose parse the process never survives (killed from here while it is
 * parsed, three times running), or one that kills its parse worker (a real worker exit, from a
 * test-only hook of the worker), is set aside after `parsing.poison_after` attempts — counted in
 * the store before each parse — as a dead letter with its raw bytes and MAILGATE_ERR_INTAKE_POISON.
 * The other messages of its batch go on.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/support/dist.js';
import { mostAttempts } from './attempts.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-poison-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mail = (id: string, hook?: 'crash' | 'hang') =>
  `${hook ? `X-Mailgate-Internal-Test-Hook: ${hook}\r\n` : ''}From: a@example.com\r\nSubject: ${id}\r\nMessage-ID: <${id}@poison.test>\r\n\r\nbody ${id}\r\n`;

function inbox(name: string, hook: 'crash' | 'hang'): string {
  const path = join(dir, name);
  mkdirSync(path);
  writeFileSync(join(path, '1-before.eml'), mail(`${name}-before`));
  writeFileSync(join(path, '2-poison.eml'), mail(`${name}-poison`, hook));
  writeFileSync(join(path, '3-after.eml'), mail(`${name}-after`));
  return path;
}

describe('poison messages', () => {
  it('a message the process never survives: killed while it is parsed three times running, the fourth run sets it aside and finishes', async () => {
    const db = join(dir, 'kill.db');
    const path = inbox('kill', 'hang');
    const child = join(ROOT, 'test', 'crash', 'poison-child.mjs');
    const dist = join(ROOT, 'dist');
    const attemptsOf = (): Promise<number> => readAttempts(db);
    for (let run = 1; run <= 3; run++) {
      const p = spawn(process.execPath, [child, dist, `sqlite:${db}`, path], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
      const end = Date.now() + 60_000;
      while ((await attemptsOf().catch(() => 0)) < run) {
        if (Date.now() > end) throw new Error(`run ${run}: the poison message was never counted`);
        await new Promise((r) => setTimeout(r, 50));
      }
      p.kill('SIGKILL');
      await exited;
    }
    const last = spawn(process.execPath, [child, dist, `sqlite:${db}`, path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    last.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => last.on('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    const result = JSON.parse(out) as { counts: Array<{ status: string; count: number }>; dead: Array<{ code: string }> };
    expect(result.dead.map((d) => d.code)).toEqual(['MAILGATE_ERR_INTAKE_POISON']);
    expect(result.counts.find((c) => c.status === 'queued')?.count).toBe(2);
  }, 240_000);
});

interface ChildResult {
  counts: Array<{ status: string; count: number }>;
  dead: Array<{ code: string; message: string; key: string; raw: string }>;
  attempts: Record<string, number>;
}

/** Runs the child over `path` to its end (each run a fresh process on the same store). */
async function runChild(db: string, path: string, poisonAfter?: number): Promise<ChildResult> {
  const args = [join(ROOT, 'test', 'crash', 'poison-child.mjs'), join(ROOT, 'dist'), `sqlite:${db}`, path];
  const p = spawn(process.execPath, poisonAfter === undefined ? args : [...args, String(poisonAfter)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => p.on('exit', (c) => resolve(c)));
  expect(code, err).toBe(0);
  return JSON.parse(out) as ChildResult;
}

/** A folder of `n` messages; message `at` starts with `hook`. */
function batch(name: string, n: number, at: number, hook: string): { path: string; poison: string } {
  const path = join(dir, name);
  mkdirSync(path);
  let poison = '';
  for (let i = 0; i < n; i++) {
    const text = `${i === at ? `X-Mailgate-Internal-Test-Hook: ${hook}\r\n` : ''}${mail(`${name}-${i}`)}`;
    writeFileSync(join(path, `${String(i).padStart(2, '0')}.eml`), text);
    if (i === at) poison = text;
  }
  return { path, poison };
}

const queued = (r: ChildResult) => r.counts.find((c) => c.status === 'queued')?.count ?? 0;

describe('a message that kills its parse worker', () => {
  it('in a batch of 20: the 19 others are queued, it is a dead letter after poison_after attempts with its raw bytes, and the run goes on', async () => {
    const deaths = join(dir, 'deaths-always');
    const { path, poison } = batch('always', 20, 7, `crash 1000 ${deaths}`);
    const result = await runChild(join(dir, 'always.db'), path);
    expect(queued(result)).toBe(19);
    expect(result.dead).toHaveLength(1);
    const [dead] = result.dead;
    expect(dead!.code).toBe('MAILGATE_ERR_INTAKE_POISON');
    expect(dead!.message).toContain('after 3 parse attempts');
    expect(dead!.message).toContain('the parse worker exited with code 70');
    expect(dead!.raw).toBe(poison);
    // It killed its worker once per attempt: three workers, no more.
    expect(statSync(deaths).size).toBe(3);
    // The count of a message set aside is kept: read again, it is set aside without a parse.
    expect(result.attempts).toEqual({ [dead!.key]: 3 });
  }, 120_000);

  it('honours parsing.poison_after', async () => {
    const deaths = join(dir, 'deaths-five');
    const { path } = batch('five', 6, 0, `crash 1000 ${deaths}`);
    const result = await runChild(join(dir, 'five.db'), path, 5);
    expect(queued(result)).toBe(5);
    expect(result.dead.map((d) => d.code)).toEqual(['MAILGATE_ERR_INTAKE_POISON']);
    expect(statSync(deaths).size).toBe(5);
  }, 120_000);

  it('a message that killed its worker twice and parses on the third attempt is queued, not dead', async () => {
    const deaths = join(dir, 'deaths-twice');
    const { path } = batch('twice', 10, 4, `crash 2 ${deaths}`);
    const result = await runChild(join(dir, 'twice.db'), path);
    expect(queued(result)).toBe(10);
    expect(result.dead).toEqual([]);
    expect(readFileSync(deaths, 'latin1')).toBe('xxx');
  }, 120_000);
});

/** The parse attempts counted for the `kill` inbox's poison message (0 before the first), as a restart counts them. */
function readAttempts(file: string): Promise<number> {
  return mostAttempts(file, (route, key) => route === 'support' && key.includes('2-poison.eml'));
}
