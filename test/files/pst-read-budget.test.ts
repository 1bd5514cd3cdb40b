/**
 * PST/OST files were read on the calling thread, outside any time or heap budget: an item the
 * reader loops on, or one that makes it allocate without end, stopped the process (the server's,
 * on an upload). The compiled reader runs in a worker with a heap limit and a time budget per
 * item; an item over either is a coded failure at its position and reading goes on after it.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { requireBuild, ROOT } from '../cli/support/dist.js';
import type { PstItem } from '../../src/mime/pst.js';
import { ENRON_PST } from './support/pst.js';

type Module = typeof import('../../src/mime/pst-thread.js');

async function reader(): Promise<Module['readPstOffThread']> {
  requireBuild();
  return ((await import(pathToFileURL(join(ROOT, 'dist/src/mime/pst-thread.js')).href)) as Module).readPstOffThread;
}

async function collect(items: AsyncIterable<PstItem>): Promise<PstItem[]> {
  const out: PstItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const failures = (items: PstItem[]) => items.filter((i) => i.error).map((i) => [i.index, i.error!.code, i.error!.message]);

describe('PST read in a budgeted worker', () => {
  it('reads the same items as the reader on the calling thread, bytes and positions alike', async () => {
    const read = await reader();
    const off = await collect(read(ENRON_PST));
    const { readPst } = await import('../../src/mime/pst.js');
    const on = await collect(readPst(ENRON_PST));
    expect(off).toHaveLength(71);
    expect(off.map((i) => [i.index, i.folder, i.next])).toEqual(on.map((i) => [i.index, i.folder, i.next]));
    expect(off.map((i) => i.raw!.toString('latin1'))).toEqual(on.map((i) => i.raw!.toString('latin1')));
  });

  // The budget is far above what a normal item takes even on a loaded machine: only the stalled one may exceed it.
  it('an item that never finishes loading is a coded failure at its position after the time budget; the rest is read', async () => {
    const read = await reader();
    const items = await collect(read(ENRON_PST, {}, { itemTimeoutMs: 2_000, testHooks: { stallAt: 5 } }));
    expect(failures(items)).toEqual([[5, 'MAILGATE_ERR_INPUT_PST_INVALID', expect.stringMatching(/longer than the 2000 ms budget/)]]);
    expect(items).toHaveLength(71);
    expect(items.filter((i) => i.raw).map((i) => i.index)).not.toContain(5);
  });

  it('an item that exhausts the heap is a coded failure naming the heap limit; the rest is read', async () => {
    const read = await reader();
    const items = await collect(read(ENRON_PST, {}, { memoryMb: 32, testHooks: { exhaustHeapAt: 9 } }));
    expect(failures(items)).toEqual([[9, 'MAILGATE_ERR_INPUT_PST_INVALID', expect.stringMatching(/more than the reader's 32 MiB heap/)]]);
    expect(items).toHaveLength(71);
  });

  it('resumes at a position inside the file', async () => {
    const read = await reader();
    const items = await collect(read(ENRON_PST, { resume: { index: 40 } }));
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((i) => i.index >= 40 && !i.error)).toBe(true);
  });
});
