/** Decides what a file holds from its first bytes, with the extension as a tie-breaker. */
import { open } from 'node:fs/promises';
import { extname } from 'node:path';

export type FileKind = 'mbox' | 'msg' | 'eml' | 'pst' | 'unknown';

const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const SNIFF_BYTES = 4096;
/** A header field line: a printable-ASCII name, a colon. */
const HEADER_LINE_RE = /^[\x21-\x39\x3b-\x7e]+[ \t]*:/;
const MAIL_EXTENSIONS: Record<string, FileKind> = {
  '.eml': 'eml',
  '.msg': 'msg',
  '.mbox': 'mbox',
  '.mbx': 'mbox',
  '.pst': 'pst',
  '.ost': 'pst',
};
/** The PST/OST signature (MS-PST dwMagic). */
const PST_MAGIC = '!BDN';

export function kindOfBytes(head: Buffer): FileKind | undefined {
  if (head.subarray(0, 8).equals(OLE_MAGIC)) return 'msg';
  if (head.toString('latin1', 0, 4) === PST_MAGIC) return 'pst';
  const text = head.toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '');
  if (text.startsWith('From ')) return 'mbox';
  // Exports often start with blank or whitespace-only lines; the parser skips them too.
  const firstLine = text.replace(/^(?:[ \t]*\r?\n)+/, '').split('\n', 1)[0] ?? '';
  if (HEADER_LINE_RE.test(firstLine)) return 'eml';
  return undefined;
}

/**
 * Content first (OLE2 magic = .msg, `!BDN` = PST/OST, `From ` = mbox, a header line = a message); else the
 * extension (.eml, .msg, .mbox, .mbx, .pst, .ost); else `unknown`. An empty file with a mail extension is
 * still that kind (an empty mbox has no messages; an empty .eml is an empty message).
 */
export async function sniffFile(file: string): Promise<FileKind> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(head, 0, SNIFF_BYTES, 0);
    return kindOfBytes(head.subarray(0, bytesRead)) ?? MAIL_EXTENSIONS[extname(file).toLowerCase()] ?? 'unknown';
  } finally {
    await fh.close();
  }
}
