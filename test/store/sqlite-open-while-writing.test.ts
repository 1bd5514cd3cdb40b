/**
 * A SQLite store opens while another process holds its write lock: `mailgate status` or the
 * console beside a `mailgate serve` in the middle of a long commit. Opening set the store's
 * auto-vacuum mode, which takes the write lock even when the mode is already the store's, so an
 * open failed with "database is locked" whenever another writer held the lock past the open's
 * busy slice (seen under load in test/push/crash.test.ts, whose checks open the store of a running
 * serve). The mode is set only on a new store now: on an existing one it changes nothing until a
 * VACUUM (`mailgate compact` sets it itself).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { input } from '../contract/store.case.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-sqlite-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('opening a SQLite store while another connection writes', () => {
  it('opens and reads while the other connection holds the write lock', async () => {
    const path = join(dir, 'busy.db');
    const first = await openStore(`sqlite:${path}`);
    await first.enqueue([input('r', 1)]);
    await first.close();

    const writer = new Database(path);
    writer.exec('BEGIN IMMEDIATE');
    try {
      const reader = await openStore(`sqlite:${path}`);
      try {
        expect(await reader.outboxDepth('r')).toBe(1);
        expect((await reader.storeStats()).autoVacuum).toBe('incremental');
      } finally {
        await reader.close();
      }
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });
});
