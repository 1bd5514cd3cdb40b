/**
 * A webhook's body read as it arrives. A form body (multipart or urlencoded) has its parts or
 * fields counted on the way — a linear scan for the multipart delimiter, or for `&` — and is
 * refused (`too_large`) the moment it holds more than the form parser would take
 * (MAX_FORM_FIELDS + MAX_FORM_FILES): an unsigned flood of tiny fields costs the bytes up to
 * that point, never a whole body buffered and then walked (Mailgun's signature is inside the
 * form, so its form must be read before anything can be trusted). Over the body limit the
 * stream fails with the endpoint's 413 code, answered as `too_large` too.
 */
import { finished, type Readable } from 'node:stream';
import { isGatewayError } from '../../src/errors.js';
import { MAX_FORM_FIELDS, MAX_FORM_FILES } from './form.js';
import { WebhookRefusal } from './provider.js';

/** Most parts (or fields) a form body may hold before it is refused unread. */
export const MAX_FORM_PARTS = MAX_FORM_FIELDS + MAX_FORM_FILES;

/** What reading one body did, for the tests that prove a flood is cut early. */
export interface BodyStats {
  /** Body bytes read. */
  bytes: number;
  /** Multipart delimiters or `&` separators seen. */
  separators: number;
}

/** Counts occurrences of `needle` in a byte stream fed in chunks of any size, each occurrence once. */
class NeedleCounter {
  count = 0;
  /** The last `needle.length - 1` bytes seen: where an occurrence split between chunks starts. */
  private carry: Buffer;

  constructor(
    private readonly needle: Buffer,
    prefix: Buffer,
  ) {
    this.carry = prefix;
  }

  push(chunk: Buffer): void {
    const n = this.needle;
    const keep = n.length - 1;
    if (this.carry.length > 0) {
      const seam = Buffer.concat([this.carry, chunk.subarray(0, keep)]);
      for (let at = seam.indexOf(n); at !== -1 && at < this.carry.length; at = seam.indexOf(n, at + 1)) this.count++;
    }
    for (let at = chunk.indexOf(n); at !== -1; at = chunk.indexOf(n, at + n.length)) this.count++;
    this.carry = chunk.length >= keep ? chunk.subarray(chunk.length - keep) : Buffer.concat([this.carry, chunk]).subarray(-keep);
  }
}

/** The separator whose count bounds the form's parts, or undefined for a body that is not a form. */
function counterFor(contentType: string | undefined): { counter: NeedleCounter; max: number } | undefined {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/x-www-form-urlencoded') {
    return { counter: new NeedleCounter(Buffer.from('&'), Buffer.alloc(0)), max: MAX_FORM_PARTS };
  }
  if (type !== 'multipart/form-data') return undefined;
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType!);
  if (!boundary) return undefined;
  // A delimiter is CRLF--boundary; the first may open the body without the CRLF (given as the prefix).
  const needle = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]!}`, 'latin1');
  // Every part opens with a delimiter and the closing one is one more.
  return { counter: new NeedleCounter(needle, Buffer.from('\r\n')), max: MAX_FORM_PARTS + 1 };
}

/** The whole body, or a `too_large` refusal as soon as it passes the body limit or (a form) MAX_FORM_PARTS. */
export async function readBody(stream: Readable, contentType: string | undefined, stats?: BodyStats): Promise<Buffer> {
  const seen = stats ?? { bytes: 0, separators: 0 };
  const form = counterFor(contentType);
  if (form === undefined) return readWhole(stream, seen);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      seen.bytes += chunk.length;
      chunks.push(chunk);
      form.counter.push(chunk);
      seen.separators = form.counter.count;
      if (form.counter.count > form.max) {
        stream.destroy();
        throw new WebhookRefusal('too_large', `the form has more than ${MAX_FORM_PARTS} parts`);
      }
    }
  } catch (err) {
    if (isGatewayError(err) && err.code.endsWith('_TOO_LARGE')) throw new WebhookRefusal('too_large', err.message);
    throw err;
  }
  return Buffer.concat(chunks);
}

/**
 * A body that is not a form, read whole with listeners: nothing to count on the way, and the
 * async iterator's per-stream machinery (a form needs its chunk-at-a-time pull) costs more than
 * the one or two chunks of a typical webhook.
 */
function readWhole(stream: Readable, seen: BodyStats): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const onData = (chunk: Buffer): void => {
    seen.bytes += chunk.length;
    chunks.push(chunk);
  };
  return new Promise<Buffer>((resolve, reject) => {
    stream.on('data', onData);
    // Ends, fails (over the limit: the endpoint's 413 code) or closes early (a client gone mid-body).
    const cleanup = finished(stream, (err) => {
      cleanup();
      stream.off('data', onData);
      if (err === undefined || err === null) return resolve(Buffer.concat(chunks));
      reject(isGatewayError(err) && err.code.endsWith('_TOO_LARGE') ? new WebhookRefusal('too_large', err.message) : err);
    });
  });
}
