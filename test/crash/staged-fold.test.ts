/**
 * SQLite's search rows and thread index entries folded after enqueue (docs/store.md,
 * src/store/sqlite/staged.ts): a process killed with SIGKILL while it folds leaves every row in
 * exactly one of the two tables — the fold's rows and their removal from the waiting table commit
 * together — and the next fold completes it, each item found once. The child runs from dist/
 * (npm run build first).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { ROOT } from '../cli/support/dist.js';
import { prng } from './support.js';

const ITEMS = 10_000;
const KILLS = 4;
const child = join(ROOT, 'test', 'crash', 'staged-fold-child.mjs');
const dist = join(ROOT, 'dist');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-staged-fold-crash-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Staged {
  /** The child's fold mode. */
  mode: 'searches' | 'threads';
  /** The items' comment ids, and those of the indexed and the waiting rows. */
  items: string;
  indexed: string;
  waiting: string;
  /** What the store's own reads find once everything is folded. */
  found: (store: Store, path: string) => Promise<void>;
}

const KINDS: Staged[] = [
  {
    mode: 'searches',
    items: 'SELECT comment_id FROM outbox ORDER BY comment_id',
    indexed: 'SELECT o.comment_id FROM outbox_search s JOIN outbox o ON o.id = s.id ORDER BY o.comment_id',
    waiting: 'SELECT o.comment_id FROM outbox_search_new s JOIN outbox o ON o.id = s.id ORDER BY o.comment_id',
    found: async (store) => {
      expect(await store.itemCounts()).toEqual([{ route: 'r', adapter: 'files', state: 'queued', count: ITEMS }]);
      const sample = await store.listItems({ q: 'fold ', limit: 10_000 });
      expect(new Set(sample.map((i) => i.id)).size).toBe(sample.length);
      expect(sample).toHaveLength(10_000);
    },
  },
  {
    mode: 'threads',
    items: 'SELECT comment_id FROM outbox ORDER BY comment_id',
    indexed: 'SELECT comment_id FROM threads ORDER BY comment_id',
    waiting: 'SELECT comment_id FROM threads_new ORDER BY comment_id',
    found: async (store, path) => {
      // Every message is in its thread once.
      const db = new Database(path, { readonly: true });
      const threadIds = db.prepare('SELECT DISTINCT thread_id FROM threads').pluck().all() as string[];
      db.close();
      const members = await store.threadMembers('acme/s', threadIds);
      const all = [...members.values()].flat().map((e) => e.commentId);
      expect(new Set(all).size).toBe(ITEMS);
      expect(all).toHaveLength(ITEMS);
    },
  },
];

/** Runs the child; `kill` (ms after it prints "folding"): SIGKILL then. Answers its output. */
function run(url: string, mode: 'fill' | Staged['mode'], kill?: number): Promise<string> {
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

/** The rows of `kind`, read beside the store. */
function ids(path: string, kind: Staged): { items: string[]; indexed: string[]; waiting: string[] } {
  const db = new Database(path, { readonly: true });
  try {
    const of = (sql: string) => db.prepare(sql).pluck().all() as string[];
    return { items: of(kind.items), indexed: of(kind.indexed), waiting: of(kind.waiting) };
  } finally {
    db.close();
  }
}

describe.each(KINDS)('$mode folded after enqueue, killed while folding', (kind) => {
  it('leaves each row indexed or waiting, never both or neither; the next fold completes it', async () => {
    const path = join(dir, `${kind.mode}.db`);
    const url = `sqlite:${path}`;
    await run(url, 'fill');
    expect(ids(path, kind).waiting).toHaveLength(ITEMS);
    const rand = prng(28);
    for (let k = 0; k < KILLS; k++) {
      // Within the first 60 ms of a fold of 10,000 rows in one transaction.
      await run(url, kind.mode, Math.floor(rand() * 60));
      const { items, indexed, waiting } = ids(path, kind);
      expect(items).toHaveLength(ITEMS);
      const waits = new Set(waiting);
      expect(indexed.filter((id) => waits.has(id))).toEqual([]);
      expect([...indexed, ...waiting].sort()).toEqual(items);
    }
    expect(await run(url, kind.mode)).toContain('folded');
    const after = ids(path, kind);
    expect(after.waiting).toEqual([]);
    expect(after.indexed).toEqual(after.items);
    const store = await openStore(url);
    try {
      await kind.found(store, path);
    } finally {
      await store.close();
    }
  }, 240_000);
});
