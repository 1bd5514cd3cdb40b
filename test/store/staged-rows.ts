/**
 * What the tests of SQLite's staged rows (src/store/sqlite/staged.ts: search rows, thread index
 * entries) share: a fresh store per test in a folder removed after the file, and the rows of a
 * staged table's two halves read beside the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

export type WithStore = (run: (store: Store, path: string) => Promise<void>) => Promise<void>;

/** Runs each call with a store of its own on a fresh file under a folder named by `prefix`. */
export function freshStores(prefix: string): WithStore {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  return async (run) => {
    const path = join(dir, `store-${(n += 1)}.db`);
    const store = await openStore(`sqlite:${path}`);
    try {
      await run(store, path);
    } finally {
      await store.close();
    }
  };
}

/** Rows in the indexed table and waiting to be folded, read beside the store. */
export function stagedCounts(path: string, indexed: string, waiting: string): { indexed: number; waiting: number } {
  const db = new Database(path, { readonly: true });
  try {
    const count = (t: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
    return { indexed: count(indexed), waiting: count(waiting) };
  } finally {
    db.close();
  }
}
