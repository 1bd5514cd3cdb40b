/**
 * How far a read of files got, in bytes: the total is the sum of the sizes of every file the
 * read visits (measured by a walk of its own), and the bytes done are the sizes of the files
 * already passed plus the position in the current one (an mbox is read message by message).
 * A second walk follows the read in step (both walk in the same order), so nothing is kept
 * per file however many the input holds.
 */
import { resolve } from 'node:path';

export interface SizedFile {
  path: string;
  size: number;
}

export class InputBytes {
  /** Undefined until the measuring walk finished (or when it failed). */
  total: number | undefined;
  private before = 0;
  private current: SizedFile | undefined;
  private target: { path: string; offset: number } | undefined;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(private readonly files: () => AsyncIterable<SizedFile>) {}

  start(): void {
    void this.measure();
    void this.follow();
  }

  /** The read handed on everything of `path` before byte `offset`. */
  at(path: string, offset: number): void {
    this.target = { path: resolve(path), offset };
    this.poke();
  }

  done(): number {
    const cur = this.current;
    const t = this.target;
    const within = cur !== undefined && t !== undefined && cur.path === t.path ? Math.min(t.offset, cur.size) : 0;
    return this.before + within;
  }

  close(): void {
    this.closed = true;
    this.poke();
  }

  private poke(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  private async measure(): Promise<void> {
    let sum = 0;
    try {
      for await (const f of this.files()) {
        if (this.closed) return;
        sum += f.size;
      }
      this.total = sum;
    } catch {
      // No total: the bar shows the bytes and rates it knows, without a percentage.
    }
  }

  /** Passes files until the cursor stands on the file the read is in. */
  private async follow(): Promise<void> {
    try {
      for await (const f of this.files()) {
        const file = { path: resolve(f.path), size: f.size };
        this.current = file;
        while (!this.closed && (this.target === undefined || this.target.path === file.path)) {
          await new Promise<void>((r) => (this.wake = r));
        }
        if (this.closed) return;
        this.before += file.size;
        this.current = undefined;
      }
    } catch {
      // The walk failed: the bytes done stay where they were.
    }
  }
}
