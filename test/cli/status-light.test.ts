/**
 * `mailgate status` opens the store and reads it without the preview and MIME modules: the
 * console's search fields of an input come from the facts intake computed in the parse worker, and
 * the module that computes them for an input without facts (the library, a replayed dead letter)
 * loads on first use. It was loaded by every store open, `status` included (about 30 modules).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { input } from '../contract/store.case.js';
import { MAIN, requireBuild, ROOT } from './support/dist.js';
import { modulesLoaded, writeLoadHook } from './support/loaded.js';

/** The compiled modules of these folders that a process ran. */
const WATCHED = /^dist\/src\/(preview|mime|document)\//;

let dir: string;
let register: string;
let db: string;

beforeAll(async () => {
  requireBuild();
  dir = await mkdtemp(join(tmpdir(), 'mailgate-status-light-'));
  register = await writeLoadHook(dir);
  db = join(dir, 'mailgate.db');
  const store = await openStore(`sqlite:${db}`);
  await store.enqueue([input('r', 1), input('r', 2)]);
  await store.close();
}, 60_000);
afterAll(async () => rm(dir, { recursive: true, force: true }));

const loaded = (stderr: string): string[] => modulesLoaded(stderr).filter((m) => WATCHED.test(m));

describe('mailgate status', () => {
  it('reads a store with items without loading the preview or MIME modules', () => {
    const r = spawnSync(process.execPath, ['--import', register, MAIN, 'status', '--store', `sqlite:${db}`], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/\br\b/);
    expect(r.status).toBe(0);
    expect(loaded(r.stderr)).toEqual([]);
  });

  it('the hook sees them in the executable once a command parses mail', () => {
    const eml = join(ROOT, 'samples', 'files', 'eml', '01-hello.eml');
    const r = spawnSync(process.execPath, ['--import', register, MAIN, 'preview', eml], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(loaded(r.stderr)).toContain('dist/src/preview/comment.js');
  });

  it('the hook sees them once a store stores an input that comes without its facts', async () => {
    const script = join(dir, 'enqueue.mjs');
    const item = input('r', 3);
    await writeFile(
      script,
      `const { openStore } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'dist/src/store/index.js')).href)});\n` +
        `const store = await openStore(${JSON.stringify(`sqlite:${db}`)});\n` +
        `const item = ${JSON.stringify({ ...item, raw: item.raw?.toString() })};\n` +
        `const r = await store.enqueue([{ ...item, raw: Buffer.from(item.raw) }]);\n` +
        `await store.close();\nconsole.log(JSON.stringify(r));\n`,
    );
    const r = spawnSync(process.execPath, ['--import', register, script], { encoding: 'utf8' });
    expect(JSON.parse(r.stdout)).toMatchObject({ queued: 1 });
    expect(loaded(r.stderr)).toContain('dist/src/preview/facts.js');
  });
});
