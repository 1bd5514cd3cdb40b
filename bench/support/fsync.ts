/**
 * How long a durable write takes on the disk under a directory: `count` appends of 4 KiB,
 * each followed by fdatasync, as a SQLite commit with synchronous=FULL ends in one. The median
 * bounds a durable answer from below: a sender that waits for each answer before its next
 * message cannot be answered faster than one commit apart.
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export function fsyncMedianMs(dir: string, count = 200): number {
  const path = join(dir, 'fsync-probe');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(4096, 1);
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      writeSync(fd, block);
      fdatasyncSync(fd);
      times.push(performance.now() - t0);
    }
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
