/**
 * One file held in memory (a file dropped on the preview's drop zone) → its messages, read as
 * `mailgate preview` and `import` read a file named on the command line: judged by its first
 * bytes and its extension (sniff.ts), an mbox split with the mboxrd rules, an Outlook .msg
 * converted in its worker, anything that is not mail refused with the same code and words.
 * PST/OST files and Google Vault exports are read from disk only (they are large and
 * random-access): refused here with what to run instead.
 */
import { GatewayError } from '../errors.js';
import { mboxMessages } from './mbox.js';
import { convertMsg } from './msg-convert.js';
import { damagedMessage, notMailMessage, SNIFF_BYTES, sniffBytes, type FileKind } from './sniff.js';

export type FileMessage = { index: number; raw: Buffer } | { index: number; error: GatewayError };

export interface FileMessages {
  /** How the file was read; undefined when it was refused whole. */
  kind?: FileKind;
  messages: FileMessage[];
  /** True when the file holds more than `maxMessages` messages: the rest was not read. */
  more: boolean;
}

export interface FileMessageLimits {
  /** Largest message in bytes: a larger one is MAILGATE_ERR_MIME_TOO_LARGE (an mbox's others are still read). */
  maxMessageBytes: number;
  /** Messages taken from one file; the rest is left unread and `more` set. */
  maxMessages: number;
}

function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot).toLowerCase() : '';
}

const failed = (error: GatewayError): FileMessages => ({ messages: [{ index: 0, error }], more: false });

function fromMbox(bytes: Buffer, name: string, limits: FileMessageLimits): FileMessages {
  const messages: FileMessage[] = [];
  for (const m of mboxMessages(bytes, 'mboxrd', limits.maxMessageBytes)) {
    if (messages.length === limits.maxMessages) return { kind: 'mbox', messages, more: true };
    const index = messages.length;
    messages.push(
      m.raw
        ? { index, raw: m.raw }
        : {
            index,
            error: new GatewayError(
              'MAILGATE_ERR_MIME_TOO_LARGE',
              `message ${index} of ${name} is larger than ${limits.maxMessageBytes} bytes`,
              {
                details: { size: m.size },
              },
            ),
          },
    );
  }
  return { kind: 'mbox', messages, more: false };
}

/** The messages of the file `name` whose bytes are `bytes`. */
export async function fileMessages(bytes: Buffer, name: string, limits: FileMessageLimits): Promise<FileMessages> {
  const ext = extensionOf(name);
  const sniffed = sniffBytes(bytes.subarray(0, SNIFF_BYTES), ext, bytes.length <= SNIFF_BYTES);
  if ('skip' in sniffed) {
    return failed(
      new GatewayError('MAILGATE_ERR_INPUT_UNSUPPORTED', notMailMessage(name, sniffed.skip), { details: { reason: sniffed.skip } }),
    );
  }
  if ('damaged' in sniffed) return failed(new GatewayError('MAILGATE_ERR_MIME_NOT_EMAIL', damagedMessage(name, sniffed.damaged)));
  const kind = sniffed.kind;
  if (kind === 'pst') {
    const message = `${name} is an Outlook PST/OST file: preview it from disk with \`mailgate preview ${name}\``;
    return { kind, ...failed(new GatewayError('MAILGATE_ERR_INPUT_UNSUPPORTED', message)) };
  }
  if (kind === 'mbox') return fromMbox(bytes, name, limits);
  if (bytes.length > limits.maxMessageBytes) {
    const error = new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `${name} is larger than ${limits.maxMessageBytes} bytes`, {
      details: { size: bytes.length },
    });
    return { kind, ...failed(error) };
  }
  if (kind === 'eml') return { kind, messages: [{ index: 0, raw: bytes }], more: false };
  try {
    return { kind, messages: [{ index: 0, raw: await convertMsg(bytes, name) }], more: false };
  } catch (err) {
    if (err instanceof GatewayError) return { kind, ...failed(err) };
    throw err;
  }
}
