/**
 * Structural check of a compound file (CFB/OLE2, MS-CFB) before an Outlook reader walks it.
 * The reader follows sector chains and the directory tree as the file says, without bounds: a
 * chain pointing back into itself makes it loop until the heap is exhausted and the process
 * dies. Here every walk is bounded: a chain visits each sector at most once and is never longer
 * than the file has sectors; every index lies inside its table; the directory tree is acyclic;
 * every stream fits its chain and the file. A file that fails is corrupt, whatever it holds.
 */
const MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const END_OF_CHAIN = 0xfffffffe;
const FREE = 0xffffffff;
const NO_STREAM = 0xffffffff;
const DIR_ENTRY = 128;
const MINI_SECTOR = 64;
const MINI_CUTOFF = 4096;
const HEADER_DIFAT = 109;
const TYPE_STORAGE = 1;
const TYPE_STREAM = 2;
const TYPE_ROOT = 5;

/** A compound file starts with these eight bytes. */
export function isCompoundFile(bytes: Buffer): boolean {
  return bytes.length >= 8 && bytes.subarray(0, 8).equals(MAGIC);
}

export class CfbError extends Error {}

interface Layout {
  bytes: Buffer;
  sectorSize: number;
  sectors: number;
  fat: number[];
}

function u32(bytes: Buffer, offset: number): number {
  if (offset + 4 > bytes.length) throw new CfbError(`read past the end of the file at ${offset}`);
  return bytes.readUInt32LE(offset);
}

/** Entries of one sector as unsigned 32-bit numbers. */
function sectorEntries(l: Pick<Layout, 'bytes' | 'sectorSize' | 'sectors'>, sector: number): number[] {
  if (sector >= l.sectors) throw new CfbError(`sector ${sector} lies outside the file (${l.sectors} sectors)`);
  const base = (sector + 1) * l.sectorSize;
  const out: number[] = [];
  for (let i = 0; i < l.sectorSize / 4; i++) out.push(base + i * 4 + 4 <= l.bytes.length ? l.bytes.readUInt32LE(base + i * 4) : FREE);
  return out;
}

/**
 * The sectors of a chain from `start`, following `table`. Corrupt when it leaves the table,
 * meets a free or special entry, visits a sector twice, or grows longer than `limit`.
 */
export function walkChain(table: readonly number[], start: number, limit: number, what: string): number[] {
  const chain: number[] = [];
  const seen = new Set<number>();
  let at = start;
  while (at !== END_OF_CHAIN) {
    if (at >= table.length || at >= limit) throw new CfbError(`${what} chain points to sector ${at}, outside the table`);
    if (seen.has(at)) throw new CfbError(`${what} chain loops at sector ${at}`);
    seen.add(at);
    chain.push(at);
    at = table[at]!;
  }
  return chain;
}

/** The FAT sector numbers: 109 in the header, the rest in the DIFAT chain. */
function fatSectors(l: Omit<Layout, 'fat'>): number[] {
  const count = u32(l.bytes, 0x2c);
  if (count > l.sectors) throw new CfbError(`${count} FAT sectors in a file of ${l.sectors} sectors`);
  const list: number[] = [];
  for (let i = 0; i < Math.min(count, HEADER_DIFAT); i++) list.push(u32(l.bytes, 0x4c + i * 4));
  let next = u32(l.bytes, 0x44);
  const difatCount = u32(l.bytes, 0x48);
  const seen = new Set<number>();
  for (let n = 0; list.length < count; n++) {
    if (n >= difatCount || next === END_OF_CHAIN || next === FREE)
      throw new CfbError('the DIFAT chain ends before every FAT sector is listed');
    if (seen.has(next)) throw new CfbError(`the DIFAT chain loops at sector ${next}`);
    seen.add(next);
    const entries = sectorEntries(l, next);
    for (const s of entries.slice(0, -1)) if (list.length < count) list.push(s);
    next = entries[entries.length - 1]!;
  }
  for (const s of list) if (s >= l.sectors) throw new CfbError(`FAT sector ${s} lies outside the file`);
  return list;
}

interface Entry {
  type: number;
  left: number;
  right: number;
  child: number;
  start: number;
  size: number;
}

function readEntries(l: Layout, chain: number[]): Entry[] {
  const out: Entry[] = [];
  for (const sector of chain) {
    const base = (sector + 1) * l.sectorSize;
    for (let o = base; o + DIR_ENTRY <= base + l.sectorSize && o + DIR_ENTRY <= l.bytes.length; o += DIR_ENTRY) {
      const b = l.bytes;
      out.push({
        type: b[o + 0x42]!,
        left: u32(b, o + 0x44),
        right: u32(b, o + 0x48),
        child: u32(b, o + 0x4c),
        start: u32(b, o + 0x74),
        size: u32(b, o + 0x78),
      });
    }
  }
  return out;
}

/** Every entry reachable from the root, each once; a second visit is a cycle. */
function treeEntries(entries: Entry[]): number[] {
  const root = entries[0];
  if (root === undefined || root.type !== TYPE_ROOT) throw new CfbError('the first directory entry is not the root');
  const seen = new Set<number>([0]);
  const stack = root.child === NO_STREAM ? [] : [root.child];
  while (stack.length > 0) {
    const i = stack.pop()!;
    const e = entries[i];
    if (e === undefined) throw new CfbError(`directory entry ${i} does not exist`);
    if (seen.has(i)) throw new CfbError(`the directory tree reaches entry ${i} twice`);
    seen.add(i);
    for (const next of [e.left, e.right, e.type === TYPE_STORAGE ? e.child : NO_STREAM]) if (next !== NO_STREAM) stack.push(next);
  }
  return [...seen];
}

function checkStream(l: Layout, e: Entry, miniFat: number[], miniSectors: number, index: number): void {
  if (e.size === 0) return;
  if (e.size > l.bytes.length) throw new CfbError(`stream ${index} claims ${e.size} bytes in a file of ${l.bytes.length}`);
  if (e.size < MINI_CUTOFF) {
    const chain = walkChain(miniFat, e.start, miniSectors, `stream ${index} (mini)`);
    if (chain.length * MINI_SECTOR < e.size) throw new CfbError(`stream ${index} is longer than its mini chain`);
    return;
  }
  const chain = walkChain(l.fat, e.start, l.sectors, `stream ${index}`);
  if (chain.length * l.sectorSize < e.size) throw new CfbError(`stream ${index} is longer than its chain`);
}

/** Throws CfbError when the compound file is corrupt in a way that would make a reader loop or overrun. */
export function checkCompoundFile(bytes: Buffer): void {
  if (bytes.length < 512 || !isCompoundFile(bytes)) throw new CfbError('not a compound file');
  const shift = bytes.readUInt16LE(30);
  if (shift !== 9 && shift !== 12) throw new CfbError(`sector shift ${shift} is neither 9 nor 12`);
  const sectorSize = 1 << shift;
  const sectors = Math.ceil((bytes.length - sectorSize) / sectorSize);
  if (sectors < 1) throw new CfbError('the file holds no sector');
  const base = { bytes, sectorSize, sectors };
  const fat = fatSectors(base).flatMap((s) => sectorEntries(base, s));
  const l: Layout = { ...base, fat };
  const entries = readEntries(l, walkChain(fat, u32(bytes, 0x30), sectors, 'directory'));
  const miniStart = u32(bytes, 0x3c);
  const miniCount = u32(bytes, 0x40);
  const miniFatChain = miniCount === 0 || miniStart === END_OF_CHAIN ? [] : walkChain(fat, miniStart, sectors, 'mini FAT');
  if (miniFatChain.length > miniCount) throw new CfbError('the mini FAT chain is longer than the header says');
  const miniFat = miniFatChain.flatMap((s) => sectorEntries(l, s));
  const reachable = treeEntries(entries);
  const root = entries[0]!;
  const rootChain = root.start === END_OF_CHAIN || root.size === 0 ? [] : walkChain(fat, root.start, sectors, 'mini stream');
  const miniSectors = Math.min(miniFat.length, (rootChain.length * sectorSize) / MINI_SECTOR);
  for (const i of reachable) if (entries[i]!.type === TYPE_STREAM) checkStream(l, entries[i]!, miniFat, miniSectors, i);
}
