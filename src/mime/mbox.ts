/**
 * An mbox held in memory (an upload) cut into messages with the same rules the files adapter
 * streams by: `From ` separators (mbox-split.ts), the separator blank line, `>From ` unquoting
 * and Content-Length (mbox-finish.ts).
 */
import { MboxFinisher, type MboxMessage, type MboxQuoting } from './mbox-finish.js';
import { MboxSplitter } from './mbox-split.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The messages of `bytes`; one whose size exceeds `maxBytes` comes back without `raw`. */
export function splitMbox(bytes: Buffer, quoting: MboxQuoting, maxBytes: number): MboxMessage[] {
  const start = bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  const splitter = new MboxSplitter(maxBytes, start);
  const finisher = new MboxFinisher(quoting, maxBytes);
  const out: MboxMessage[] = [];
  for (const seg of splitter.push(bytes.subarray(start))) out.push(...finisher.push(seg));
  for (const seg of splitter.end()) out.push(...finisher.push(seg));
  out.push(...finisher.end());
  return out;
}

/** Whether `bytes` opens like an mbox (a `From ` line first, past a UTF-8 BOM). */
export function looksLikeMbox(bytes: Buffer): boolean {
  const start = bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  return bytes.toString('latin1', start, start + 5) === 'From ';
}
