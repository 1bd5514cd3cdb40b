/** Streams an mbox file as messages, with bounded memory, resumable at a byte offset. */
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { GatewayError } from '../../src/errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/limits.js';
import { parseDate } from '../../src/mime/date.js';
import { MboxFinisher, type MboxMessage } from '../../src/mime/mbox-finish.js';
import { MboxSplitter } from '../../src/mime/mbox-split.js';
import { DEFAULT_CHUNK_BYTES, type FileItem, type FilePosition, type ReadOptions } from './types.js';
import { fileOrigin } from './identity.js';

async function bytesAt(file: string, offset: number, length: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, offset);
    return buf.toString('latin1', 0, bytesRead);
  } finally {
    await fh.close();
  }
}

const UTF8_BOM = '\xEF\xBB\xBF';

/**
 * Where to start: the resume offset when it is the end of the file (all read) or still points
 * at a `From ` line (read on from there, also when the file grew), else the top (past a UTF-8
 * BOM), skipping `index` messages.
 */
async function startPoint(
  file: string,
  resume?: FilePosition | { index: number; offset?: number },
): Promise<{ offset: number; index: number; skip: number }> {
  const top = (await bytesAt(file, 0, 3)) === UTF8_BOM ? 3 : 0;
  if (!resume) return { offset: top, index: 0, skip: 0 };
  if (resume.offset !== undefined && resume.offset > top && resume.offset === (await stat(file)).size) {
    return { offset: resume.offset, index: resume.index, skip: 0 };
  }
  if (resume.offset !== undefined && resume.offset > top && (await bytesAt(file, resume.offset, 5)) === 'From ') {
    return { offset: resume.offset, index: resume.index, skip: 0 };
  }
  return { offset: top, index: 0, skip: resume.index };
}

/** The date of a `From sender date` line (asctime, read as UTC without a zone), or undefined. */
export function fromLineDate(line: Buffer): Date | undefined {
  const text = line.toString('latin1', 5, Math.min(line.length, 200)).trim();
  const space = text.search(/\s/);
  return space < 0 ? undefined : parseDate(text.slice(space + 1));
}

function toItem(file: string, m: MboxMessage, index: number, maxBytes: number): FileItem {
  const receivedAt = fromLineDate(m.fromLine);
  const base = {
    origin: fileOrigin(file, index),
    offset: m.start,
    next: { index: index + 1, offset: m.end },
    ...(receivedAt && { receivedAt }),
  };
  if (m.raw) return { ...base, raw: m.raw };
  const error = new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `message ${index} of ${file} is larger than ${maxBytes} bytes`, {
    details: { size: m.size },
  });
  return { ...base, error };
}

export async function* readMbox(
  file: string,
  options: ReadOptions & { resume?: { index: number; offset?: number } } = {},
): AsyncGenerator<FileItem> {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const start = await startPoint(file, options.resume);
  const splitter = new MboxSplitter(maxBytes, start.offset);
  const finisher = new MboxFinisher(options.mboxQuoting ?? 'mboxrd', maxBytes);
  let index = start.index;
  let skip = start.skip;
  // The messages of each chunk are collected in one array and yielded from it: a generator per
  // chunk delegated to with `yield*` cost every message a generator step and its result object.
  const ready: FileItem[] = [];
  const collect = (messages: MboxMessage[]): void => {
    for (let i = 0; i < messages.length; i++) {
      if (skip > 0) {
        skip--;
        index++;
        continue;
      }
      ready.push(toItem(file, messages[i]!, index++, maxBytes));
    }
  };
  const stream = createReadStream(file, { start: start.offset, highWaterMark: options.chunkBytes ?? DEFAULT_CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const segs = splitter.push(chunk);
      for (let i = 0; i < segs.length; i++) collect(finisher.push(segs[i]!));
      for (let i = 0; i < ready.length; i++) yield ready[i]!;
      ready.length = 0;
    }
  } catch (err) {
    stream.destroy();
    for (let i = 0; i < ready.length; i++) yield ready[i]!;
    const error = new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', `cannot read ${file}: ${(err as Error).message}`, { cause: err });
    yield { origin: fileOrigin(file, index), offset: 0, next: { index, offset: 0 }, error };
    return;
  }
  for (const seg of splitter.end()) collect(finisher.push(seg));
  collect(finisher.end());
  for (let i = 0; i < ready.length; i++) yield ready[i]!;
}
