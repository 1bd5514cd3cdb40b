/**
 * Which b-trees a SQLite store's commits write: the frames appended to the -wal file are read
 * after each commit (frame header: page number, then the salt of the WAL's current generation;
 * a checkpoint that restarts the WAL changes the salt and the frames start again at its head),
 * and at the end each page number is named from `dbstat` (a table or index; pages `dbstat` does
 * not list are pointer-map or free pages). Only for a bench: it reads the file after every commit.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type Database from 'better-sqlite3';

const WAL_HEADER = 32;
const FRAME_HEADER = 24;

export class WalFrames {
  /** Frames seen per page number. */
  private readonly pages = new Map<number, number>();
  private salt = '';
  private offset = WAL_HEADER;
  private frames = 0;

  constructor(
    private readonly walPath: string,
    private readonly pageSize: number,
  ) {}

  /** Reads the frames written since the last call (call after each commit). */
  scan(): void {
    const fd = openSync(this.walPath, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size < WAL_HEADER) return;
      const head = Buffer.alloc(WAL_HEADER);
      readSync(fd, head, 0, WAL_HEADER, 0);
      const salt = `${head.readUInt32BE(16)}:${head.readUInt32BE(20)}`;
      if (salt !== this.salt) {
        this.salt = salt;
        this.offset = WAL_HEADER;
      }
      const frame = Buffer.alloc(FRAME_HEADER);
      while (this.offset + FRAME_HEADER + this.pageSize <= size) {
        readSync(fd, frame, 0, FRAME_HEADER, this.offset);
        // A frame left over from an earlier generation carries the old salt: the end of this one.
        if (`${frame.readUInt32BE(8)}:${frame.readUInt32BE(12)}` !== salt) break;
        const page = frame.readUInt32BE(0);
        this.pages.set(page, (this.pages.get(page) ?? 0) + 1);
        this.frames += 1;
        this.offset += FRAME_HEADER + this.pageSize;
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Starts counting afresh (the frames before are skipped, not counted). */
  reset(): void {
    this.scan();
    this.pages.clear();
    this.frames = 0;
  }

  /** Frames per b-tree, most first, named by `dbstat` of the database `db` (open on the same file). */
  byBtree(db: Database.Database): { total: number; rows: Array<{ name: string; frames: number }> } {
    const names = new Map<number, string>(
      (db.prepare('SELECT pageno, name FROM dbstat').all() as Array<{ pageno: number; name: string }>).map((r) => [r.pageno, r.name]),
    );
    const by = new Map<string, number>();
    for (const [page, n] of this.pages) {
      const name = names.get(page) ?? '(pointer map or free)';
      by.set(name, (by.get(name) ?? 0) + n);
    }
    const rows = [...by].map(([name, frames]) => ({ name, frames })).sort((a, b) => b.frames - a.frames || (a.name < b.name ? -1 : 1));
    return { total: this.frames, rows };
  }
}
