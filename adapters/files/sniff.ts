/** A file on disk judged by its first bytes (src/mime/sniff.ts): read it as mail, keep it as damaged, or skip it. */
import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { SNIFF_BYTES, sniffBytes, type Sniffed } from '../../src/mime/sniff.js';

export { hasHeaderBlock, RECOGNISERS, SKIP, SNIFF_BYTES, sniffBytes } from '../../src/mime/sniff.js';
export type { FileKind, Recogniser, Sniffed, SniffInput } from '../../src/mime/sniff.js';

/** Reads the first SNIFF_BYTES of `file` and judges them. */
export async function sniffFile(file: string): Promise<Sniffed> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(head, 0, SNIFF_BYTES, 0);
    return sniffBytes(head.subarray(0, bytesRead), extname(file), bytesRead < SNIFF_BYTES);
  } finally {
    await fh.close();
  }
}
