/**
 * Streams an Outlook PST or OST file folder by folder, one item at a time, read from disk by
 * `pst-extractor` (never the whole file in memory: the reader seeks to each node it needs).
 * The position of an item is its index in the file's walk (folders depth first in the file's
 * order, items in each folder's contents table order): the checkpoint, as the byte offset is
 * for an mbox. Resuming skips whole folders by their item counts and moves the folder's cursor
 * to the item, without reading the items before it.
 */
import { open, stat } from 'node:fs/promises';
import { setImmediate as tick } from 'node:timers/promises';
import { PSTFile, type PSTFolder, type PSTMessage } from 'pst-extractor';
import { GatewayError } from '../errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../limits.js';
import { pstToRfc822 } from './pst-message.js';

/** Where an item starts in its file: its position in the walk, and a byte offset in proportion (for progress). */
export interface PstPosition {
  index: number;
  offset: number;
}

interface PstItemBase extends PstPosition {
  /** The folder path (`Inbox`, `lokay-m/Personal`); absent on a failure of the whole file. */
  folder?: string;
  /** Position of the next item: the checkpoint once this one is done. */
  next: PstPosition;
  /** Delivery (else submit) time of the item. */
  receivedAt?: Date;
}

/** One item of the file: its RFC 5322 bytes, or the coded reason it could not be read. */
export type PstItem = (PstItemBase & { raw: Buffer; error?: undefined }) | (PstItemBase & { raw?: undefined; error: GatewayError });

export interface PstReadOptions {
  /** Size budget of one rebuilt message (default DEFAULT_MAX_MESSAGE_BYTES). */
  maxMessageBytes?: number;
  /** Start at this position (a checkpoint). */
  resume?: { index: number };
  /** An item that is not mail (a contact, a calendar item), with `<file>#<folder>/<n>` and the reason. */
  onSkip?: (label: string, reason: string) => void;
  /** Called with an item's position before the reader loads it (the off-thread reader's watchdog reads it). */
  onStep?: (index: number) => void;
}

/** Encryption of a PST/OST as its header states it (MS-PST 2.2.2.6 bCryptMethod). */
export type PstEncryption = 'none' | 'compressible' | 'high' | 'unknown';

export interface PstHeader {
  /** `pst` (wMagicClient `SM`) or `ost` (`SO`). */
  format: 'pst' | 'ost';
  encryption: PstEncryption;
}

const CRYPT: Record<number, PstEncryption> = { 0: 'none', 1: 'compressible', 2: 'high' };

/** The file's format and encryption from its first 514 bytes, or undefined when it is not a PST/OST. */
export function pstHeader(head: Buffer): PstHeader | undefined {
  if (head.length < 12 || head.toString('latin1', 0, 4) !== '!BDN') return undefined;
  const format = head.toString('latin1', 8, 10) === 'SO' ? 'ost' : 'pst';
  const ver = head.readUInt16LE(10);
  // ANSI files (wVer 14, 15) keep bCryptMethod at 461; Unicode ones (23, 36) at 513.
  const at = ver === 14 || ver === 15 ? 461 : 513;
  return { format, encryption: head.length > at ? (CRYPT[head[at]!] ?? 'unknown') : 'unknown' };
}

/** Item classes that are not mail (contacts, calendar, tasks, notes, journal, documents): left out, reported as skipped. */
const NOT_MAIL_RE = /^IPM\.(Contact|DistList|Appointment|Task|StickyNote|Activity|Document|Configuration)(\.|$)/i;
/** Top segments of the folder tree that name the store, not a folder the user sees. */
const STORE_ROOT_RE = /^(Top of .*|Root - Mailbox|Root - Public)$/;

interface Folder {
  path: string;
  folder: PSTFolder | undefined;
  count: number;
}

/**
 * The reader writes to the console when it skips an item it cannot load: kept off stdout
 * (where `preview` writes its JSON); the skipped positions are reported as failure items.
 */
function quietly<T>(fn: () => T): T {
  const { log, error } = console;
  console.log = () => undefined;
  console.error = () => undefined;
  try {
    return fn();
  } finally {
    console.log = log;
    console.error = error;
  }
}

function folders(root: PSTFolder): Folder[] {
  const out: Folder[] = [];
  const visit = (folder: PSTFolder, segments: string[]) => {
    out.push({ path: segments.join('/'), folder, count: Math.max(0, folder.contentCount) });
    for (const sub of folder.hasSubfolders ? folder.getSubFolders() : []) {
      const name = sub.displayName;
      const top = segments.length === 0 && STORE_ROOT_RE.test(name);
      const ipm = name === 'IPM_SUBTREE' && segments.length === 0;
      visit(sub, top || ipm ? segments : [...segments, name]);
    }
  };
  visit(root, []);
  return out;
}

/** The folder's cursor: the reader's index of the next contents-table row. */
const cursor = (f: PSTFolder): number => (f as unknown as { currentEmailIndex: number }).currentEmailIndex;

async function headOf(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(514);
    const { bytesRead } = await fh.read(head, 0, 514, 0);
    return head.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

export async function* readPst(file: string, options: PstReadOptions = {}): AsyncGenerator<PstItem> {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const size = (await stat(file)).size;
  let offsetOf = (_index: number) => 0;
  const fail = (index: number, error: GatewayError, folder?: string): PstItem => ({
    index,
    ...(folder !== undefined && { folder }),
    offset: offsetOf(index),
    next: { index: index + 1, offset: offsetOf(index + 1) },
    error,
  });
  const header = pstHeader(await headOf(file));
  if (header?.encryption === 'high') {
    const message = `${file} is an Outlook ${header.format.toUpperCase()} file with "high" encryption, which mailgate does not read (export it again without encryption, or with "compressible" encryption)`;
    yield fail(0, new GatewayError('MAILGATE_ERR_INPUT_PST_ENCRYPTED', message, { details: { encryption: 'high' } }));
    return;
  }
  let pst: PSTFile;
  let list: Folder[];
  try {
    pst = quietly(() => new PSTFile(file));
    list = quietly(() => folders(pst.getRootFolder()));
  } catch (err) {
    const message = `${file} is not a readable Outlook PST/OST file: ${(err as Error).message}`;
    yield fail(0, new GatewayError('MAILGATE_ERR_INPUT_PST_INVALID', message, { cause: err }));
    return;
  }
  const total = list.reduce((n, f) => n + f.count, 0);
  offsetOf = (index: number) => (total === 0 ? size : Math.floor((size * Math.min(index, total)) / total));
  const resumeAt = options.resume?.index ?? 0;
  let base = 0;
  let read = 0;
  try {
    for (const entry of list) {
      const folder = entry.folder!;
      entry.folder = undefined;
      const start = Math.max(0, resumeAt - base);
      if (start >= entry.count) {
        base += entry.count;
        continue;
      }
      options.onStep?.(base + start);
      quietly(() => folder.moveChildCursorTo(start));
      for (;;) {
        const before = cursor(folder);
        options.onStep?.(base + before);
        let child: unknown;
        try {
          child = quietly(() => folder.getNextChild());
        } catch (err) {
          child = null;
          const message = `item ${before} of folder "${entry.path}" in ${file} cannot be read: ${(err as Error).message}`;
          yield fail(base + before, new GatewayError('MAILGATE_ERR_INPUT_PST_INVALID', message, { cause: err }), entry.path);
        }
        const after = cursor(folder);
        // Rows the reader stepped over because it could not load them: reported, never silent.
        for (let k = before; k < (child ? after - 1 : after); k++) {
          const message = `item ${k} of folder "${entry.path}" in ${file} cannot be read`;
          yield fail(base + k, new GatewayError('MAILGATE_ERR_INPUT_PST_INVALID', message), entry.path);
        }
        if (!child) break;
        const index = base + after - 1;
        const m = child as PSTMessage;
        const kind = m.messageClass ?? '';
        if (NOT_MAIL_RE.test(kind) || typeof m.transportMessageHeaders !== 'string') {
          options.onSkip?.(`${file}#${entry.path}/${after - 1}`, `not mail (${kind || 'no message class'})`);
          continue;
        }
        yield convert(file, m, index, entry.path, maxBytes, { index: index + 1, offset: offsetOf(index + 1) });
        if (++read % 16 === 0) await tick();
      }
      base += entry.count;
    }
  } finally {
    pst.close();
  }
}

function convert(file: string, m: PSTMessage, index: number, folder: string, maxBytes: number, next: PstPosition): PstItem {
  const arrived = m.messageDeliveryTime ?? m.clientSubmitTime;
  const base = {
    index,
    folder,
    offset: next.offset,
    next,
    ...(arrived && Number.isFinite(arrived.getTime()) && { receivedAt: arrived }),
  };
  let raw: Buffer;
  try {
    raw = quietly(() => pstToRfc822(m, `${index}`)).raw;
  } catch (err) {
    const message = `item ${index} (folder "${folder}") of ${file} cannot be rebuilt: ${(err as Error).message}`;
    return { ...base, error: new GatewayError('MAILGATE_ERR_INPUT_PST_INVALID', message, { cause: err }) };
  }
  if (raw.length > maxBytes) {
    const message = `item ${index} (folder "${folder}") of ${file} is larger than ${maxBytes} bytes`;
    return { ...base, error: new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', message, { details: { size: raw.length } }) };
  }
  return { ...base, raw };
}
