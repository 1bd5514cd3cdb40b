/**
 * SQLite's search rows folded after enqueue (docs/store.md): a process killed with SIGKILL while
 * it folds leaves every item's search row in exactly one of the two tables — the fold's rows and
 * their removal from the waiting table commit together — and the next fold completes it, each
 * item found once. The child runs from dist/ (npm run build first).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { ROOT } from '../cli/support/dist.js';
import { prng } from './support.js';

const ITEMS = 10_000;
const KILLS = 4;
const child = join(ROOT, 'test', 'crash', 'search-fold-child.mjs');
const dist = join(ROOT, 'dist');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-search-fold-crash-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the child; `kill` (ms after it prints "folding"): SIGKILL then. Answers its output. */
function run(url: string, mode: 'fill' | 'fold', kill?: number): Promise<string> {
  const p = spawn(process.execPath, [child, dist, url, mode, String(ITEMS)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err += d.toString()));
  p.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    if (kill !== undefined && out.includes('folding')) setTimeout(() => p.kill('SIGKILL'), kill);
  });
  return new Promise((resolve, reject) =>
    p.on('exit', (code, signal) =>
      code === 0 || signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ${mode}: ${code} ${err}`)),
    ),
  );
}

/** The item ids, and those of the indexed and the waiting search rows, read beside the store. */
function ids(path: string): { items: number[]; indexed: number[]; waiting: number[] } {
  const db = new Database(path, { readonly: true });
  try {
    const of = (sql: string) => db.prepare(sql).pluck().all() as number[];
    return {
      items: of('SELECT id FROM outbox ORDER BY id'),
      indexed: of('SELECT id FROM outbox_search ORDER BY id'),
      waiting: of('SELECT id FROM outbox_search_new ORDER BY id'),
    };
  } finally {
    db.close();
  }
}

describe('search rows folded after enqueue, killed while folding', () => {
  it('leaves each search row indexed or waiting, never both or neither; the next fold completes it', async () => {
    const path = join(dir, 'store.db');
    const url = `sqlite:${path}`;
    await run(url, 'fill');
    expect(ids(path).waiting).toHaveLength(ITEMS);
    const rand = prng(28);
    for (let k = 0; k < KILLS; k++) {
      // Within the first 60 ms of a fold of 10,000 rows in one transaction.
      await run(url, 'fold', Math.floor(rand() * 60));
      const { items, indexed, waiting } = ids(path);
      expect(items).toHaveLength(ITEMS);
      const waits = new Set(waiting);
      expect(indexed.filter((id) => waits.has(id))).toEqual([]);
      expect([...indexed, ...waiting].sort((a, b) => a - b)).toEqual(items);
    }
    expect(await run(url, 'fold')).toContain('folded');
    const after = ids(path);
    expect(after.waiting).toEqual([]);
    expect(after.indexed).toEqual(after.items);
    const store = await openStore(url);
    try {
      const counts = await store.itemCounts();
      expect(counts).toEqual([{ route: 'r', adapter: 'files', state: 'queued', count: ITEMS }]);
      const sample = await store.listItems({ q: 'fold ', limit: 10_000 });
      expect(new Set(sample.map((i) => i.id)).size).toBe(sample.length);
      expect(sample).toHaveLength(10_000);
    } finally {
      await store.close();
    }
  }, 240_000);
});
