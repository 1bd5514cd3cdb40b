/**
 * Persistence of the emulator state in a data directory:
 *   state.json  — a snapshot, replaced atomically (write temp, fsync, rename);
 *   log.jsonl   — one line per change since that snapshot, appended before the change is
 *                 applied in memory, so an answered (or dropped-after-apply) write survives
 *                 a restart of the process.
 * Every log line carries a sequence number; the snapshot records the last one it includes,
 * so a crash between the rename and the log truncation never replays a change twice.
 * A torn last line (the process died mid-write) is ignored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { GatewayError } from '../errors.js';
import type { Snapshot, StateOp } from './state.js';

const SNAPSHOT = 'state.json';
const LOG = 'log.jsonl';
/** Compact the log into a new snapshot once it grows past this many bytes. */
export const COMPACT_LOG_BYTES = 64 * 1024 * 1024;

export interface Loaded {
  snapshot: Snapshot | undefined;
  ops: StateOp[];
}

function corrupt(file: string, cause: unknown): GatewayError {
  return new GatewayError('MAILGATE_ERR_EMULATOR_STATE_CORRUPT', `cannot read ${file}: ${(cause as Error).message}`, { cause });
}

export class Journal {
  private fd: number | undefined;
  private seq = 0;
  private logBytes = 0;

  constructor(readonly dir: string) {}

  /** Reads the snapshot and the log ops newer than it, and opens the log for appending. */
  open(): Loaded {
    fs.mkdirSync(this.dir, { recursive: true });
    const snapshot = this.readSnapshot();
    this.seq = snapshot?.last_seq ?? 0;
    const ops = this.readLog().filter((op) => op.seq > this.seq);
    for (const op of ops) this.seq = Math.max(this.seq, op.seq);
    this.fd = fs.openSync(path.join(this.dir, LOG), 'a');
    this.logBytes = fs.fstatSync(this.fd).size;
    return { snapshot, ops };
  }

  private readSnapshot(): Snapshot | undefined {
    const file = path.join(this.dir, SNAPSHOT);
    if (!fs.existsSync(file)) return undefined;
    try {
      return JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
    } catch (err) {
      throw corrupt(file, err);
    }
  }

  private readLog(): StateOp[] {
    const file = path.join(this.dir, LOG);
    if (!fs.existsSync(file)) return [];
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    const ops: StateOp[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        ops.push(JSON.parse(line) as StateOp);
      } catch (err) {
        const last = lines.slice(i + 1).every((l) => l.trim() === '');
        if (!last) throw corrupt(file, err);
      }
    });
    return ops;
  }

  /** Stamps the op with the next sequence number and appends it durably (to the OS). */
  append(op: StateOp): StateOp {
    if (this.fd === undefined) throw new Error('journal is not open');
    const stamped = { ...op, seq: this.seq + 1 } as StateOp;
    const line = JSON.stringify(stamped) + '\n';
    fs.writeSync(this.fd, line);
    this.seq = stamped.seq;
    this.logBytes += Buffer.byteLength(line);
    return stamped;
  }

  needsCompaction(): boolean {
    return this.logBytes > COMPACT_LOG_BYTES;
  }

  /** Writes a snapshot covering every appended op, then empties the log. */
  compact(snapshot: Omit<Snapshot, 'last_seq'>): void {
    if (this.fd === undefined) return;
    const file = path.join(this.dir, SNAPSHOT);
    const tmp = `${file}.${process.pid}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, JSON.stringify({ ...snapshot, last_seq: this.seq }));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    fs.ftruncateSync(this.fd, 0);
    this.logBytes = 0;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
