/** Streams an mbox file as messages, with bounded memory, resumable at a byte offset. */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { GatewayError } from '../../src/errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/limits.js';
import { MboxFinisher, type MboxMessage } from './mbox-finish.js';
import { MboxSplitter } from './mbox-split.js';
import { DEFAULT_CHUNK_BYTES, type FileItem, type FilePosition, type ReadOptions } from './types.js';

async function startsWithFromAt(file: string, offset: number): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(5);
    const { bytesRead } = await fh.read(buf, 0, 5, offset);
    return bytesRead === 5 && buf.toString('latin1') === 'From ';
  } finally {
    await fh.close();
  }
}

/** Where to start: the resume offset when it still points at a `From ` line, else the top (skipping `index` messages). */
async function startPoint(file: string, resume?: FilePosition | { index: number; offset?: number }): Promise<{ offset: number; index: number; skip: number }> {
  if (!resume) return { offset: 0, index: 0, skip: 0 };
  if (resume.offset !== undefined && resume.offset > 0 && (await startsWithFromAt(file, resume.offset))) {
    return { offset: resume.offset, index: resume.index, skip: 0 };
  }
  return { offset: 0, index: 0, skip: resume.index };
}

function toItem(file: string, m: MboxMessage, index: number, maxBytes: number): FileItem {
  const base = { origin: { adapter: 'files' as const, path: file, index }, offset: m.start, next: { index: index + 1, offset: m.end } };
  if (m.raw) return { ...base, raw: m.raw };
  const error = new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `message ${index} of ${file} is larger than ${maxBytes} bytes`, { details: { size: m.size } });
  return { ...base, error };
}

export async function* readMbox(file: string, options: ReadOptions & { resume?: { index: number; offset?: number } } = {}): AsyncGenerator<FileItem> {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const start = await startPoint(file, options.resume);
  const splitter = new MboxSplitter(maxBytes, start.offset);
  const finisher = new MboxFinisher(options.mboxQuoting ?? 'mboxrd', maxBytes);
  let index = start.index;
  let skip = start.skip;
  const emit = function* (messages: MboxMessage[]): Generator<FileItem> {
    for (const m of messages) {
      if (skip > 0) {
        skip--;
        index++;
        continue;
      }
      yield toItem(file, m, index++, maxBytes);
    }
  };
  const stream = createReadStream(file, { start: start.offset, highWaterMark: options.chunkBytes ?? DEFAULT_CHUNK_BYTES });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      for (const seg of splitter.push(chunk)) yield* emit(finisher.push(seg));
    }
  } catch (err) {
    stream.destroy();
    const error = new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', `cannot read ${file}: ${(err as Error).message}`, { cause: err });
    yield { origin: { adapter: 'files', path: file, index }, offset: 0, next: { index, offset: 0 }, error };
    return;
  }
  for (const seg of splitter.end()) yield* emit(finisher.push(seg));
  yield* emit(finisher.end());
}
