/**
 * Uploaded files → messages. An mbox gives one message per `From ` separator (mboxrd rules,
 * as the files adapter reads them); an Outlook .msg is converted to RFC 5322; a PST/OST, spooled
 * to disk, is read item by item in the budgeted reader's worker (src/mime/pst-thread.ts), each
 * item with its folder. A file that cannot be read becomes a dead letter with its bytes (a PST
 * item: its reason) and the reason, never a silent drop.
 */
import { GatewayError, isGatewayError } from '../../src/errors.js';
import { mboxMessages } from '../../src/mime/mbox.js';
import { convertMsg } from '../../src/mime/msg-convert.js';
import { readPstOffThread } from '../../src/mime/pst-thread.js';
import type { UploadedFile } from './files.js';

export interface UploadedMessage {
  /** File name (multipart) and index inside the file (mbox), for the answer and the origin. */
  file?: string;
  index?: number;
  /** The folder of a PST/OST item. */
  folder?: string;
  raw: Buffer;
  failure?: { code: string; message: string };
}

const label = (f: UploadedFile) => f.name ?? 'the body';

function* fromMbox(f: UploadedFile, maxBytes: number): Generator<UploadedMessage> {
  let index = 0;
  for (const m of mboxMessages(f.bytes, 'mboxrd', maxBytes)) {
    const at = { ...(f.name !== undefined && { file: f.name }), index };
    if (m.raw) yield { ...at, raw: m.raw };
    else {
      const failure = { code: 'MAILGATE_ERR_MIME_TOO_LARGE', message: `message ${index} of ${label(f)} is larger than ${maxBytes} bytes` };
      yield { ...at, raw: Buffer.alloc(0), failure };
    }
    index++;
  }
  if (index === 0) {
    const failure = { code: 'MAILGATE_ERR_INPUT_UNSUPPORTED', message: `${label(f)} is not an mbox: no "From " separator line` };
    yield { ...(f.name !== undefined && { file: f.name }), raw: f.bytes, failure };
  }
}

/** Converted in a worker under the parse budgets, as the files adapter does: a hostile file cannot stall the server. */
async function fromMsg(f: UploadedFile): Promise<UploadedMessage> {
  const at = f.name !== undefined ? { file: f.name } : {};
  try {
    return { ...at, raw: await convertMsg(f.bytes, label(f)) };
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return { ...at, raw: f.bytes, failure: { code: err.code, message: err.message } };
  }
}

/** Skipped items (contacts, calendar items) are not messages: they are left out, as the files adapter does. */
async function* fromPst(f: UploadedFile, maxBytes: number): AsyncGenerator<UploadedMessage> {
  for await (const item of readPstOffThread(f.path!, { maxMessageBytes: maxBytes })) {
    const at = {
      ...(f.name !== undefined && { file: f.name }),
      index: item.index,
      ...(item.folder !== undefined && { folder: item.folder }),
    };
    if (item.error === undefined) yield { ...at, raw: item.raw };
    else yield { ...at, raw: Buffer.alloc(0), failure: { code: item.error.code, message: item.error.message } };
  }
}

function fromEml(f: UploadedFile): UploadedMessage {
  const at = f.name !== undefined ? { file: f.name } : {};
  if (f.bytes.toString('latin1').trim() === '') {
    return { ...at, raw: f.bytes, failure: { code: 'MAILGATE_ERR_MIME_EMPTY', message: `${label(f)} holds no message` } };
  }
  return { ...at, raw: f.bytes };
}

/** Work done by one messagesOf call (the tests prove the 413 comes before the rest is split). */
export interface SplitStats {
  /** Messages taken from the files so far. */
  messages: number;
}

/**
 * Every message of the upload, in file order, counted as the files are split: 413 the moment
 * there are more than `maxMessages`, with at most one slice of an mbox split beyond that.
 */
export async function messagesOf(
  files: UploadedFile[],
  maxBytes: number,
  maxMessages: number,
  stats: SplitStats = { messages: 0 },
): Promise<UploadedMessage[]> {
  const out: UploadedMessage[] = [];
  const take = (m: UploadedMessage): void => {
    out.push(m);
    stats.messages++;
    if (out.length > maxMessages) {
      throw new GatewayError('MAILGATE_ERR_UPLOAD_TOO_LARGE', `the upload holds more than ${maxMessages} messages`);
    }
  };
  for (const f of files) {
    if (f.kind === 'mbox') for (const m of fromMbox(f, maxBytes)) take(m);
    else if (f.kind === 'pst') for await (const m of fromPst(f, maxBytes)) take(m);
    else take(f.kind === 'msg' ? await fromMsg(f) : fromEml(f));
  }
  return out;
}
