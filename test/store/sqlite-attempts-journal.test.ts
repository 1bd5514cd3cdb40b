/**
 * A SQLite store on disk counts a message's first parse attempt in a journal file beside it
 * (`<file>-attempts-<pid>`), not in the database: one append before the parse, one when the
 * message is stored, and no database write for either. What a dead process's journal holds is
 * moved into the attempts table by the next process that counts attempts on the store, so a
 * message that killed the process is still known as tried after a restart.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { COMPACT_BYTES } from '../../src/store/sqlite/attempts-journal.js';
import { OwnerLock } from '../../src/store/sqlite/owner-lock.js';
import type { Store } from '../../src/store/types.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-attempts-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const freshPath = (): string => join(dir, `store-${(n += 1)}.db`);

const opened: Store[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
});
async function open(path: string): Promise<Store> {
  const s = await openStore(`sqlite:${path}`);
  opened.push(s);
  return s;
}

/** Every file of the store's attempts journals: journals, their locks, claims. */
const files = (path: string): string[] => readdirSync(dir).filter((f) => f.startsWith(`${basename(path)}-attempts-`));
/** This process's journal of the store (its name: the pid and 8 random hex digits). */
function journal(path: string): string {
  const mine = files(path).filter((f) => new RegExp(`-attempts-${process.pid}-[0-9a-f]{8}$`).test(f));
  expect(mine).toHaveLength(1);
  return join(dir, mine[0]!);
}
/** A journal named as an older version named it: by its process's pid alone. */
const pidJournal = (path: string, pid: number): string => `${path}-attempts-${pid}`;
const line = (sign: '+' | '-', route: string, key: string): string => `${JSON.stringify([sign, route, key])}\n`;

/** Rows of the attempts table, read through a connection of its own. */
function rows(path: string): Array<{ route: string; key: string; attempts: number }> {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT route, key, attempts FROM parse_attempts ORDER BY route, key').all() as Array<{
      route: string;
      key: string;
      attempts: number;
    }>;
  } finally {
    db.close();
  }
}

/** Frames in the -wal file (each database write adds some). */
function walBytes(path: string): number {
  return statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;
}

/** The pid of a process that ran and has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid!;
}

describe('SQLite parse attempts: first attempts in a journal beside the store', () => {
  it('counts and forgets a first attempt with appends to its journal, writing nothing to the database', async () => {
    const path = freshPath();
    const s = await open(path);
    await s.beginParseAttempts('r', []);
    const before = walBytes(path);
    expect(await s.beginParseAttempts('r', ['a', 'b'])).toEqual(new Set(['a', 'b']));
    expect(readFileSync(journal(path), 'utf8')).toBe(line('+', 'r', 'a') + line('+', 'r', 'b'));
    expect(await s.parseAttempts('r', ['a', 'b', 'c'])).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    );
    await s.clearParseAttempts('r', ['a']);
    expect(readFileSync(journal(path), 'utf8')).toBe(line('+', 'r', 'a') + line('+', 'r', 'b') + line('-', 'r', 'a'));
    // Nothing left to count: the journal is emptied.
    await s.clearParseAttempts('r', ['b']);
    expect(readFileSync(journal(path), 'utf8')).toBe('');
    expect(walBytes(path)).toBe(before);
    expect(rows(path)).toEqual([]);
    await s.close();
    opened.length = 0;
    // Its journal and the lock it held are gone.
    expect(files(path)).toEqual([]);
  });

  it('a message counted again moves its first attempt into the table with the second', async () => {
    const path = freshPath();
    const s = await open(path);
    await s.beginParseAttempts('r', ['a']);
    expect(await s.countParseAttempts('r', ['a'])).toEqual(new Map([['a', 2]]));
    expect(rows(path)).toEqual([{ route: 'r', key: 'a', attempts: 2 }]);
    expect(await s.parseAttempts('r', ['a'])).toEqual(new Map([['a', 2]]));
    // Counted before: not a first attempt any more.
    expect(await s.beginParseAttempts('r', ['a', 'b'])).toEqual(new Set(['b']));
    await s.clearParseAttempts('r', ['a', 'b']);
    expect(rows(path)).toEqual([]);
    expect(readFileSync(journal(path), 'utf8')).toBe('');
  });

  it('after a crash: the next process moves the net attempts of a dead process into the table, and leaves a running one alone', async () => {
    const path = freshPath();
    await (await open(path)).close();
    opened.length = 0;
    const dead = pidJournal(path, deadPid());
    // `b` ended, `a` counted twice (two processes died on it), a line torn by a power cut.
    writeFileSync(dead, line('+', 'r', 'a') + line('+', 'r', 'b') + line('-', 'r', 'b') + '["+","r","to');
    writeFileSync(pidJournal(path, deadPid()), line('+', 'r', 'a') + line('+', 'q', 'c'));
    const running = pidJournal(path, process.ppid);
    writeFileSync(running, line('+', 'r', 'z'));
    const s = await open(path);
    expect(await s.beginParseAttempts('r', ['a', 'b', 'z'])).toEqual(new Set(['b', 'z']));
    expect(rows(path)).toEqual([
      { route: 'q', key: 'c', attempts: 1 },
      { route: 'r', key: 'a', attempts: 2 },
    ]);
    expect(await s.countParseAttempts('r', ['a'])).toEqual(new Map([['a', 3]]));
    expect(files(path).sort()).toEqual([journal(path), `${journal(path)}.lock`, running].map((f) => basename(f)).sort());
  });

  it('leaves the journal of a running process alone by the lock it holds, whatever its pid (another PID namespace), and takes it once that process ended', async () => {
    const path = freshPath();
    await (await open(path)).close();
    opened.length = 0;
    // A process in another container sharing the folder: its pid is nobody's here, or this one's.
    const others = [`${deadPid()}-0badf00d`, `${process.pid}-0ddba11a`].map((id) => `${path}-attempts-${id}`);
    const locks = others.map((other, i) => {
      writeFileSync(other, line('+', 'r', `live-${i}`));
      return OwnerLock.hold(`${other}.lock`);
    });
    const s = await open(path);
    expect(await s.beginParseAttempts('r', ['mine'])).toEqual(new Set(['mine']));
    // Not taken: neither in the table nor as this process's.
    expect(rows(path)).toEqual([]);
    expect(await s.parseAttempts('r', ['live-0', 'live-1'])).toEqual(new Map());
    for (const other of others) expect(readFileSync(other, 'utf8')).not.toBe('');
    await s.close();
    opened.length = 0;
    // They end (the kernel lets go of their locks; here, their lock files stay behind).
    for (const lock of locks) lock.release();
    for (const other of others) writeFileSync(`${other}.lock`, '');
    const next = await open(path);
    await next.beginParseAttempts('r', ['x']);
    expect(rows(path)).toEqual([
      { route: 'r', key: 'live-0', attempts: 1 },
      { route: 'r', key: 'live-1', attempts: 1 },
      { route: 'r', key: 'mine', attempts: 1 },
    ]);
    // What they left is gone with their journals: this process's journal and lock remain.
    expect(files(path).sort()).toEqual([journal(path), `${journal(path)}.lock`].map((f) => basename(f)).sort());
  });

  it('removes a lock file left without a journal once it is free and a minute old, and no other', async () => {
    const path = freshPath();
    await (await open(path)).close();
    opened.length = 0;
    const pid = deadPid();
    const lock = (id: string) => `${path}-attempts-${pid}-${id}.lock`;
    const ago = (file: string, ms: number) => utimesSync(file, new Date(Date.now() - ms), new Date(Date.now() - ms));
    // Left behind: its process ended between removing its journal and its lock.
    writeFileSync(lock(`00000001`), '');
    ago(lock(`00000001`), 120_000);
    // Just made: its process may be about to lock it.
    writeFileSync(lock(`00000002`), '');
    // Held by a running process (another PID namespace): old, but not left behind.
    const held = OwnerLock.hold(lock(`00000003`));
    ago(lock(`00000003`), 120_000);
    try {
      const s = await open(path);
      await s.beginParseAttempts('r', ['a']);
      const left = files(path).filter((f) => f.endsWith('.lock') && f !== basename(`${journal(path)}.lock`));
      expect(left.map((f) => f.slice(-13)).sort()).toEqual(['00000002.lock', '00000003.lock']);
    } finally {
      held.release();
    }
  });

  it('keeps its journal small under a steady load: rewritten with the live keys alone past COMPACT_BYTES', async () => {
    const path = freshPath();
    const s = await open(path);
    await s.beginParseAttempts('r', ['held']);
    const key = (i: number) => `key-${i}-${'x'.repeat(64)}`;
    for (let i = 0; i < 6_000; i++) {
      await s.beginParseAttempts('r', [key(i)]);
      await s.clearParseAttempts('r', [key(i)]);
    }
    expect(statSync(journal(path)).size).toBeLessThanOrEqual(COMPACT_BYTES + 200);
    expect(await s.parseAttempts('r', ['held', key(0), key(5_999)])).toEqual(new Map([['held', 1]]));
    expect(rows(path)).toEqual([]);
    // What a crash now would leave: `held` alone.
    const text = readFileSync(journal(path), 'utf8');
    const net = new Map<string, number>();
    for (const l of text.split('\n').filter(Boolean)) {
      const [sign, , k] = JSON.parse(l) as [string, string, string];
      net.set(k, (net.get(k) ?? 0) + (sign === '+' ? 1 : -1));
    }
    expect([...net].filter(([, v]) => v !== 0)).toEqual([['held', 1]]);
  });

  it('a store closed with a message in flight leaves its attempt in the journal, and a late forget fails without touching it', async () => {
    const path = freshPath();
    const s = await open(path);
    await s.beginParseAttempts('r', ['a']);
    await s.close();
    opened.length = 0;
    await expect(s.clearParseAttempts('r', ['a'])).rejects.toThrow();
    expect(readFileSync(journal(path), 'utf8')).toBe(line('+', 'r', 'a'));
    // The next open in this process takes it as an earlier process's: counted, not in flight.
    const again = await open(path);
    expect(await again.beginParseAttempts('r', ['a'])).toEqual(new Set());
    expect(rows(path)).toEqual([{ route: 'r', key: 'a', attempts: 1 }]);
  });

  it('an in-memory store counts in its table as before', async () => {
    const s = await openStore('sqlite::memory:');
    opened.push(s);
    expect(await s.beginParseAttempts('r', ['a'])).toEqual(new Set(['a']));
    expect(await s.parseAttempts('r', ['a'])).toEqual(new Map([['a', 1]]));
    expect(existsSync(resolve(`:memory:-attempts-${process.pid}`))).toBe(false);
  });
});
