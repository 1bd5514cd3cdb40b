/**
 * First parse attempts of a SQLite store, counted in a journal file beside it rather than in the
 * database: `<store file>-attempts-<pid>-<8 hex digits>`, one per process (and per opening of the
 * store in it, the digits random so that two processes of one pid — in two PID namespaces — never
 * share one). A message's first attempt is one line
 * appended before its parse (`+`) and its end another once it is stored (`-`); one `write` each,
 * without a sync, where a database write would add WAL frames and their checkpoint. Both must
 * outlive the process, not a power cut (docs/store.md), which the operating system's page cache
 * does. The attempts table keeps the rest: a message counted again (it came back after a crash,
 * or killed its parse worker) and every count a dead process left in its journal, which the next
 * process to count attempts on the store moves into the table (`takeOrphans`) before its first.
 * A process holds a lock on `<journal>.lock` (./owner-lock.ts) for as long as its journal is open
 * and before any file of its own exists: the journals, rewrites and claims of a process whose
 * lock is held are left alone, whatever its pid, so a process in another container sharing the
 * store's folder never takes a journal still in use. A journal an older version named by its pid
 * alone has no lock: it is taken when no process of that pid runs here (or it has this one's).
 *
 * The keys begun and not yet ended ("live") are shared by every connection of this process to the
 * file, so two opens of one store see each other's first attempts as the table would show them.
 * The file is emptied whenever nothing is live, and rewritten with the live keys alone once it
 * grows past COMPACT_BYTES, so it stays small under a steady load.
 */
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join, resolve } from 'node:path';
import { pidExists } from '../../pids.js';
import { lockState, OwnerLock } from './owner-lock.js';

/** Size past which the journal is rewritten with its live keys alone. */
export const COMPACT_BYTES = 256 * 1024;

/** Net attempts by route and key. */
export type Counts = Map<string, Map<string, number>>;

const journals = new Map<string, AttemptsJournal>();

/** The journal of the store file `dbPath` for this process, shared by its connections; `release` it on close. */
export function journalOf(dbPath: string): AttemptsJournal {
  const path = resolve(dbPath);
  let journal = journals.get(path);
  if (journal === undefined) journals.set(path, (journal = new AttemptsJournal(path)));
  journal.users += 1;
  return journal;
}

const line = (sign: '+' | '-', route: string, key: string): string => `${JSON.stringify([sign, route, key])}\n`;

/**
 * A file name after `<store file>-attempts-`: its writer's id (`<pid>-<hex>`, or an older
 * version's `<pid>`), then for a journal being moved into the table `.fold-<claimer's id>`, for a
 * rewrite `.compact`, for the writer's lock `.lock`.
 */
const NAME = /^([0-9]+(?:-[0-9a-f]{8})?)(?:\.(fold|compact|lock)(?:-([0-9]+(?:-[0-9a-f]{8})?))?)?$/;

/** How old a lock file without a journal must be before it is removed as left behind, in ms. */
const STRAY_LOCK_MS = 60_000;

export class AttemptsJournal {
  users = 0;
  /** This process's file. */
  readonly file: string;
  /** This process's id in the names of its files: `<pid>-<8 hex digits>`. */
  readonly id: string;
  private lock: OwnerLock | undefined;
  private fd: number | undefined;
  private bytes = 0;
  private readonly live = new Map<string, Set<string>>();
  private liveCount = 0;
  private orphansTaken = false;

  constructor(private readonly dbPath: string) {
    this.id = `${process.pid}-${randomBytes(4).toString('hex')}`;
    this.file = `${dbPath}-attempts-${this.id}`;
  }

  /** Holds this process's lock, before any file of its own is written. */
  private held(): void {
    this.lock ??= OwnerLock.hold(`${this.file}.lock`);
  }

  /**
   * Whether the process of `id` still runs: its lock is held (an older version's journal, named
   * by a pid alone: a process of that pid runs here, and it is not this one).
   */
  private running(dir: string, prefix: string, id: string): boolean {
    if (id === this.id) return true;
    if (/^[0-9]+$/.test(id)) return Number(id) !== process.pid && pidExists(Number(id));
    return lockState(join(dir, `${prefix}${id}.lock`)) === 'held';
  }

  /**
   * Once per process and file, before the first count: the net attempts in the journals of
   * processes no longer running (and one of this pid: an earlier process's), each claimed by a
   * rename so that two processes starting together do not both take it. `done` removes them; call
   * it once their counts are in the table (a crash in between counts them again: one attempt more).
   */
  takeOrphans(): { counts: Counts; done: () => void } | undefined {
    if (this.orphansTaken) return undefined;
    this.orphansTaken = true;
    this.held();
    const dir = dirname(this.dbPath);
    const prefix = `${basename(this.dbPath)}-attempts-`;
    const names = readdirSync(dir).filter((name) => name.startsWith(prefix));
    const claimed: string[] = [];
    const writers = new Set<string>();
    const locks: string[] = [];
    for (const name of names) {
      const m = NAME.exec(name.slice(prefix.length));
      if (m === null) continue;
      const [, owner, kind, claimer] = m as unknown as [string, string, string | undefined, string | undefined];
      if (kind === 'lock') {
        locks.push(owner);
        continue;
      }
      writers.add(claimer ?? owner);
      writers.add(owner);
      if (this.running(dir, prefix, claimer ?? owner)) continue;
      const from = join(dir, name);
      if (kind === 'compact') {
        // A rewrite that never replaced its journal: the journal itself still holds the counts.
        tryUnlink(from);
        continue;
      }
      const to = join(dir, `${prefix}${owner}.fold-${this.id}`);
      try {
        if (from !== to) renameSync(from, to);
        claimed.push(to);
      } catch {
        // Taken by another process meanwhile.
        continue;
      }
      // Its writer's lock is free (or gone): the journal claimed, nothing is left of it.
      if (kind === undefined) tryUnlink(join(dir, `${prefix}${owner}.lock`));
    }
    // The lock of a process that ended between removing its journal and its lock, or of one
    // whose journal was claimed: no file of it left, its lock free and old.
    for (const owner of locks) {
      if (owner === this.id || writers.has(owner)) continue;
      const path = join(dir, `${prefix}${owner}.lock`);
      const age = Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STRAY_LOCK_MS && lockState(path) === 'free') tryUnlink(path);
    }
    const counts: Counts = new Map();
    for (const file of claimed) addLines(counts, readFileSync(file, 'utf8'));
    return { counts, done: () => claimed.forEach(tryUnlink) };
  }

  isLive(route: string, key: string): boolean {
    return this.live.get(route)?.has(key) === true;
  }

  /** Counts a first attempt of each key (not live, distinct) with one write. */
  begin(route: string, keys: readonly string[]): void {
    if (keys.length === 0) return;
    let text = '';
    for (const key of keys) text += line('+', route, key);
    this.append(text);
    let set = this.live.get(route);
    if (set === undefined) this.live.set(route, (set = new Set()));
    for (const key of keys) set.add(key);
    this.liveCount += keys.length;
  }

  /** Ends the live attempts among `keys` with one write; answers the keys that were not live. */
  end(route: string, keys: readonly string[]): string[] {
    const set = this.live.get(route);
    const ended: string[] = [];
    const others: string[] = [];
    for (const key of keys) {
      if (set?.delete(key) === true) ended.push(key);
      else others.push(key);
    }
    if (ended.length === 0) return others;
    if (set!.size === 0) this.live.delete(route);
    this.liveCount -= ended.length;
    if (this.liveCount === 0) this.empty();
    else if (this.bytes > COMPACT_BYTES) this.compact();
    else this.append(ended.map((key) => line('-', route, key)).join(''));
    return others;
  }

  /** Drops this connection's use; the last one closes the file, removed when nothing is live. */
  release(): void {
    if ((this.users -= 1) > 0) return;
    journals.delete(this.dbPath);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    if (this.liveCount === 0) tryUnlink(this.file);
    // Without its lock a journal left with live keys is a dead process's: the next one takes it.
    this.lock?.release();
    this.lock = undefined;
  }

  private append(text: string): void {
    this.held();
    this.fd ??= openSync(this.file, 'a');
    this.bytes += writeSync(this.fd, text);
  }

  /** Nothing is live: the file is emptied (a crash now leaves nothing to count). */
  private empty(): void {
    if (this.fd === undefined) return;
    ftruncateSync(this.fd);
    this.bytes = 0;
  }

  /** The live keys alone, in a new file that replaces the journal at once (rename). */
  private compact(): void {
    let text = '';
    for (const [route, keys] of this.live) for (const key of keys) text += line('+', route, key);
    const next = `${this.file}.compact`;
    const fd = openSync(next, 'w');
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(next, this.file);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(this.file, 'a');
    this.bytes = Buffer.byteLength(text);
  }
}

/** Adds a journal's net counts to `counts`; a line a power cut tore is skipped. */
function addLines(counts: Counts, text: string): void {
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    let entry: unknown;
    try {
      entry = JSON.parse(raw);
    } catch {
      continue;
    }
    if (!Array.isArray(entry) || entry.length !== 3) continue;
    const [sign, route, key] = entry as unknown[];
    if ((sign !== '+' && sign !== '-') || typeof route !== 'string' || typeof key !== 'string') continue;
    let byKey = counts.get(route);
    if (byKey === undefined) counts.set(route, (byKey = new Map()));
    const n = (byKey.get(key) ?? 0) + (sign === '+' ? 1 : -1);
    if (n > 0) byKey.set(key, n);
    else byKey.delete(key);
  }
}

function tryUnlink(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}
