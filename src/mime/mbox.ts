/**
 * An mbox held in memory (an upload) cut into messages with the same rules the files adapter
 * streams by: `From ` separators (mbox-split.ts), the separator blank line, `>From ` unquoting
 * and Content-Length (mbox-finish.ts).
 */
import { MboxFinisher, type MboxMessage, type MboxQuoting } from './mbox-finish.js';
import { MboxSplitter } from './mbox-split.js';

const UTF8_BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The bytes are split in slices this large, so a caller can stop (a count passed) after little work. */
const SLICE_BYTES = 64 * 1024;

/**
 * The messages of `bytes` one at a time, split slice by slice: a caller that stops early (too many
 * messages) has split at most one slice more than it took. One whose size exceeds `maxBytes`
 * comes back without `raw`.
 */
export function* mboxMessages(bytes: Buffer, quoting: MboxQuoting, maxBytes: number): Generator<MboxMessage> {
  const start = bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  const splitter = new MboxSplitter(maxBytes, start);
  const finisher = new MboxFinisher(quoting, maxBytes);
  for (let at = start; at < bytes.length; at += SLICE_BYTES) {
    for (const seg of splitter.push(bytes.subarray(at, Math.min(at + SLICE_BYTES, bytes.length)))) yield* finisher.push(seg);
  }
  for (const seg of splitter.end()) yield* finisher.push(seg);
  yield* finisher.end();
}

/** The messages of `bytes`; one whose size exceeds `maxBytes` comes back without `raw`. */
export function splitMbox(bytes: Buffer, quoting: MboxQuoting, maxBytes: number): MboxMessage[] {
  return [...mboxMessages(bytes, quoting, maxBytes)];
}

/** Whether `bytes` opens like an mbox (a `From ` line first, past a UTF-8 BOM). */
export function looksLikeMbox(bytes: Buffer): boolean {
  const start = bytes.subarray(0, 3).equals(UTF8_BOM) ? 3 : 0;
  return bytes.toString('latin1', start, start + 5) === 'From ';
}
