/**
 * Checkpoints of a store whose commits sync off the event loop (./wal-sync.ts), with their two
 * syncs on the thread pool too. SQLite's automatic checkpoint runs inside the COMMIT that takes
 * the WAL past its threshold and syncs the WAL and then the database file there, holding the
 * event loop for both (about 0.25 s of every 10,000 messages imported here). Instead, after a
 * durable commit has been synced (and every ROUND_CHECK_MS, for the writes that are not durable
 * commits), once the WAL holds ROUND_WAL_BYTES of frames, one round:
 *
 * 1. a second connection of this process begins a read (the "pin"): its snapshot ends at the last
 *    frame written so far, and while it reads, SQLite can neither copy a later frame into the
 *    database file nor restart the WAL over the frames it reads;
 * 2. an fdatasync of the -wal file on the thread pool: every frame of the pin's snapshot is on
 *    disk (what SQLite's checkpoint syncs first);
 * 3. a PASSIVE checkpoint with synchronous=OFF, on a connection of the store's checkpoint thread
 *    (./checkpoint-thread.ts; on this thread's connection should that thread have failed): the
 *    pages of those frames are copied into the database file, and SQLite syncs nothing;
 * 4. an fdatasync of the database file on the thread pool (what SQLite's checkpoint syncs last);
 * 5. the pin's read ends. Only now can the WAL be restarted over the copied frames, which are on
 *    disk in the database file: a power cut at any step finds them in one file or the other.
 *
 * Durable commits wait for the round (without holding the thread): no frame is added meanwhile,
 * so the round copies the whole WAL and the next commit restarts it at its start, which keeps
 * the file's size bounded. A write that does not wait (a parse-attempt count) may add frames
 * during a round; the round then copies what it can and a later one restarts the WAL. A long
 * series of such writes (reclaimSpace's vacuum steps) waits for a round between its writes
 * (`between`). Should the WAL still grow past ROUND_MAX_WAL_BYTES, a round checkpoints the way
 * SQLite would, syncs on this thread included, and truncates it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import Database from 'better-sqlite3';
import { CheckpointThread } from './checkpoint-thread.js';

/** The wal-index header's first fields, up to and with mxFrame (a 32-bit count at byte 16). */
const WAL_INDEX_HEADER_BYTES = 20;

/** Bytes of frames in the WAL from which a round runs: SQLite's own threshold (1,000 pages of 8 KiB). */
export const ROUND_WAL_BYTES = 8 * 1024 * 1024;

/** How often the WAL's size is looked at besides after each durable commit, in ms. */
export const ROUND_CHECK_MS = 5_000;

/** Bytes of frames in the WAL past which a round checkpoints and truncates it on this thread. */
export const ROUND_MAX_WAL_BYTES = 64 * 1024 * 1024;

/** The statements that set the connection's synchronous level around an unsynced write. */
export interface Levels {
  off: Database.Statement;
  full: Database.Statement;
}

interface Pin {
  db: Database.Database;
  begin: Database.Statement;
  read: Database.Statement;
  end: Database.Statement;
}

export class WalRounds {
  /** The round under way: durable commits wait for it. */
  underWay: Promise<void> | undefined;
  private pin: Pin | undefined;
  private dbFd: number | undefined;
  private shmFd: number | undefined;
  private readonly pageSize: number;
  private readonly header = Buffer.alloc(WAL_INDEX_HEADER_BYTES);
  private readonly passive: Database.Statement;
  private readonly truncate: Database.Statement;
  private readonly timer: NodeJS.Timeout;
  /**
   * Where step 3 runs: started once the WAL holds half a round's frames, so that a store that never
   * needs a round (a small import, an idle service) never starts it, and the first round finds it
   * running.
   */
  private thread: CheckpointThread | undefined;
  /** The store is closing: no round starts any more. */
  private finishing = false;

  constructor(
    private readonly db: Database.Database,
    private readonly level: Levels,
    /** One fdatasync on the thread pool (its failure is the store's: see WalSync). */
    private readonly syncFd: (fd: number) => Promise<void>,
    private readonly walFd: () => number,
    /** Told of each round that checkpoints and truncates the WAL on this thread (tests count them). */
    private readonly onTruncate: () => void = () => undefined,
  ) {
    db.pragma('wal_autocheckpoint = 0');
    this.pageSize = db.pragma('page_size', { simple: true }) as number;
    this.passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    this.truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)');
    // Writes that are not durable commits (heartbeats, leases, parse attempts) grow the WAL too,
    // and a process may make nothing else for hours: they are looked at now and then as well.
    this.timer = setInterval(() => this.afterSync(), ROUND_CHECK_MS);
    this.timer.unref();
  }

  /** After a durable commit's sync (and every ROUND_CHECK_MS): starts a round when one is due. */
  afterSync(): void {
    if (this.underWay !== undefined || this.finishing || !this.db.open) return;
    let size: number;
    try {
      size = this.walBytes();
    } catch {
      return; // The -shm file unreadable for now: the next look tries again.
    }
    if (size >= ROUND_WAL_BYTES / 2) this.thread ??= new CheckpointThread(this.db.name);
    if (size < ROUND_WAL_BYTES) return;
    this.start(size > ROUND_MAX_WAL_BYTES ? () => this.truncated() : () => this.round());
  }

  /**
   * Between the steps of a long write that is no durable commit (reclaimSpace's vacuum steps):
   * starts a round when one is due and waits for it, so that the steps add no frame while it
   * copies and the next one restarts the WAL. Without it the steps' frames piled up past
   * ROUND_MAX_WAL_BYTES while intake's commits kept each round short of the WAL's end.
   */
  async between(): Promise<void> {
    this.afterSync();
    await this.underWay;
  }

  /**
   * Before the store closes: waits for the round under way. What the WAL still holds SQLite
   * copies as the connection closes, syncs included: the close waits for them either way.
   */
  async finish(): Promise<void> {
    this.finishing = true;
    clearInterval(this.timer);
    await this.underWay;
    await this.thread?.close();
    this.pin?.db.close();
    this.pin = undefined;
    for (const fd of [this.dbFd, this.shmFd]) if (fd !== undefined) closeSync(fd);
    this.dbFd = undefined;
    this.shmFd = undefined;
  }

  /**
   * Bytes of the frames the WAL holds now (its restarts overwrite the file from its start, so the
   * file's size says nothing): `mxFrame` of the wal-index header at the start of the -shm file,
   * a documented format (https://www.sqlite.org/walformat.html), in this machine's byte order.
   */
  private walBytes(): number {
    const fd = (this.shmFd ??= openSync(`${this.db.name}-shm`, 'r'));
    if (readSync(fd, this.header, 0, WAL_INDEX_HEADER_BYTES, 0) < WAL_INDEX_HEADER_BYTES) return 0;
    const frames = endianness() === 'LE' ? this.header.readUInt32LE(16) : this.header.readUInt32BE(16);
    return frames * this.pageSize;
  }

  private start(run: () => Promise<void>): void {
    // A failed sync fails the store (WalSync answers every later commit with it); a checkpoint
    // refused as busy (another process checkpointing) only makes this round a short one.
    this.underWay = run()
      .catch(() => undefined)
      .finally(() => {
        this.underWay = undefined;
      });
  }

  private async round(): Promise<void> {
    const pin = (this.pin ??= this.openPin());
    pin.begin.run();
    try {
      pin.read.get();
      await this.syncFd(this.walFd());
      const copied = await this.copy();
      if (copied > 0) await this.syncFd((this.dbFd ??= openSync(this.db.name, 'r')));
    } finally {
      pin.end.run();
    }
  }

  /**
   * Copies the frames the pin lets through into the database file without syncing, on the
   * checkpoint thread: the frames of the WAL now in the database file. On this thread when there
   * is none (a round due before it was started), and from then on should it fail.
   */
  private async copy(): Promise<number> {
    const thread = this.thread;
    if (thread?.alive === true) {
      try {
        return (await thread.checkpoint()).checkpointed;
      } catch (err) {
        // A checkpoint that failed cuts this round short; a thread that ended leaves it to this one.
        if (thread.alive) throw err;
      }
    }
    return this.checkpoint();
  }

  /** Copies the frames the pin lets through into the database file without syncing, on this thread. */
  private checkpoint(): number {
    this.level.off.run();
    try {
      // Frames of the WAL now in the database file (this round's and earlier ones'): any, and the
      // database file is synced, also after a round cut short by another process's checkpoint.
      return (this.passive.get() as { checkpointed: number }).checkpointed;
    } finally {
      this.level.full.run();
    }
  }

  /** The WAL kept growing: copied and truncated the way SQLite would, its syncs on this thread. */
  private async truncated(): Promise<void> {
    this.onTruncate();
    this.truncate.get();
  }

  private openPin(): Pin {
    const db = new Database(this.db.name, { fileMustExist: true });
    db.pragma('busy_timeout = 20');
    return { db, begin: db.prepare('BEGIN'), read: db.prepare('SELECT count(*) FROM sqlite_schema'), end: db.prepare('COMMIT') };
  }
}
