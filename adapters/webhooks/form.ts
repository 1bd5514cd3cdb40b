/**
 * multipart/form-data and application/x-www-form-urlencoded bodies parsed from the exact request
 * bytes with busboy, keeping every field's value as the bytes sent.
 *
 * busboy decodes field values to strings. With `latin1` as the default charset every byte maps
 * to one char, so `Buffer.from(value, 'latin1')` restores the bytes; a multipart part that labels
 * its own charset is decoded with it, and is restored by PartWalker below.
 * busboy cuts a field or file over its limit silently (it only sets a flag); here that is a
 * `too_large` refusal, never a shorter value.
 */
import busboy from 'busboy';
import type { PushRequest } from '../../src/pipeline/types.js';
import { WebhookRefusal } from './provider.js';
import { header, mediaType, refuse } from './util.js';

export interface FormFile {
  filename: string | undefined;
  mimeType: string;
  data: Buffer;
}

export interface ParsedForm {
  /** Every field in body order, values as sent (repeated names kept). */
  readonly fields: ReadonlyArray<readonly [string, Buffer]>;
  /** Every file part in body order, keyed by field name. */
  readonly files: ReadonlyArray<readonly [string, FormFile]>;
  /** The last value of a field (the one providers mean when a name repeats). */
  last(name: string): Buffer | undefined;
  /** The last value as UTF-8 text. */
  text(name: string): string | undefined;
  file(name: string): FormFile | undefined;
}

const FIELD_NAME_LIMIT = 1024;
/** Most fields of one form: providers send a few dozen; more is refused (413) before the rest is parsed. */
export const MAX_FORM_FIELDS = 1000;
/** Most file parts of one form (SendGrid's parsed mode sends each attachment as one). */
export const MAX_FORM_FILES = 1000;
/** Most header lines of one multipart part. */
export const MAX_PART_HEADERS = 32;
/** The body is handed to the parser in slices this large; the event loop is given back after each. */
const SLICE_BYTES = 256 * 1024;

/** What one parse did, for the tests and benches that prove the work is linear and bounded. */
export interface FormStats {
  fields: number;
  files: number;
  /** Body bytes walked to find the exact bytes of multipart fields (at most about the body's size). */
  scannedBytes: number;
}

function form(fields: Array<[string, Buffer]>, files: Array<[string, FormFile]>): ParsedForm {
  const lastOf = <T>(list: ReadonlyArray<readonly [string, T]>, name: string): T | undefined => {
    for (let i = list.length - 1; i >= 0; i--) if (list[i]![0] === name) return list[i]![1];
    return undefined;
  };
  return {
    fields,
    files,
    last: (name) => lastOf(fields, name),
    text: (name) => lastOf(fields, name)?.toString('utf8'),
    file: (name) => lastOf(files, name),
  };
}

const utf8Of = (latin1: string): string => Buffer.from(latin1, 'latin1').toString('utf8');

/** busboy's headers: for urlencoded without the charset parameter, which would override latin1. */
function busboyHeaders(req: PushRequest): Record<string, string> {
  const type = mediaType(req);
  if (type === 'application/x-www-form-urlencoded') return { 'content-type': type };
  if (type === 'multipart/form-data') return { 'content-type': header(req, 'content-type')! };
  return refuse('malformed', `expected a form body, got Content-Type "${type || '(none)'}"`);
}

/**
 * Parses the body of `req`; `limit` bounds each field and file (normally the body limit). The
 * work is linear in the body and bounded: at most MAX_FORM_FIELDS fields, MAX_FORM_FILES files and
 * MAX_PART_HEADERS header lines a part (more is a `too_large` refusal that stops the parse), the
 * body walked once to find the fields' exact bytes, and the event loop given back between slices.
 */
export async function parseForm(req: PushRequest, limit: number, stats?: FormStats): Promise<ParsedForm> {
  const headers = busboyHeaders(req);
  const seen = stats ?? { fields: 0, files: 0, scannedBytes: 0 };
  const fields: Array<[string, Buffer]> = [];
  const files: Array<[string, FormFile]> = [];
  let failure: unknown;
  let closed = false;
  const fail = (err: unknown) => {
    failure ??= err;
  };
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers,
      defCharset: 'latin1',
      defParamCharset: 'latin1',
      limits: {
        fieldSize: limit,
        fileSize: limit,
        fieldNameSize: FIELD_NAME_LIMIT,
        fields: MAX_FORM_FIELDS,
        files: MAX_FORM_FILES,
        headerPairs: MAX_PART_HEADERS,
      },
    });
  } catch {
    return refuse('malformed', 'the form Content-Type has no usable boundary');
  }
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(headers['content-type']!);
  const parts = boundary ? new PartWalker(req.body, boundary[1] ?? boundary[2]!, seen) : undefined;
  bb.on('field', (name, value, info) => {
    if (failure !== undefined) return;
    seen.fields++;
    if (info.valueTruncated || info.nameTruncated)
      return fail(refuseLater('too_large', `form field "${utf8Of(name)}" exceeds ${limit} bytes`));
    const bytes = parts ? parts.bytesOf(value) : Buffer.from(value, 'latin1');
    if (bytes) fields.push([utf8Of(name), bytes]);
    else fail(refuseLater('malformed', `form field "${utf8Of(name)}" declares a charset its bytes are not in`));
  });
  bb.on('file', (name, stream, info) => {
    seen.files++;
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => {
      if (failure === undefined) chunks.push(c);
    });
    stream.on('limit', () => fail(refuseLater('too_large', `form file "${utf8Of(name)}" exceeds ${limit} bytes`)));
    stream.on('close', () => {
      const filename = info.filename === undefined ? undefined : utf8Of(info.filename);
      if (failure === undefined) files.push([utf8Of(name), { filename, mimeType: info.mimeType, data: Buffer.concat(chunks) }]);
    });
  });
  bb.on('fieldsLimit', () => fail(refuseLater('too_large', `the form has more than ${MAX_FORM_FIELDS} fields`)));
  bb.on('filesLimit', () => fail(refuseLater('too_large', `the form has more than ${MAX_FORM_FILES} files`)));
  bb.on('error', () => fail(refuseLater('malformed', 'the form body is truncated or broken')));
  // Settled when the parser closes or fails, whichever comes first (either may happen inside a write).
  const settled = new Promise<void>((resolve) => {
    bb.on('close', () => {
      closed = true;
      resolve();
    });
    bb.on('error', () => resolve());
  });
  const body = req.body;
  for (let at = 0; at < body.length && failure === undefined; at += SLICE_BYTES) {
    if (at > 0) await new Promise((resolve) => setImmediate(resolve));
    bb.write(body.subarray(at, at + SLICE_BYTES));
  }
  if (failure !== undefined) {
    bb.destroy();
    throw failure;
  }
  bb.end();
  await settled;
  if (failure !== undefined) throw failure;
  if (!closed) return refuse('malformed', 'the form body is truncated or broken');
  return form(fields, files);
}

/**
 * Walks the parts of a multipart body once, in order, to give the bytes a field was sent as.
 * busboy decodes a part that labels its own charset with that charset instead of latin1: a UTF-8
 * label gives a string whose latin1 encoding is not the bytes sent. busboy reports fields in
 * body order, so the part of the next field is the next part (from where the last one was found)
 * whose body is one of the candidate encodings of the value; parts in between are files or
 * skipped parts. Every byte of the body is walked about once per parse, however many fields it
 * has. When no part matches (a UTF-8 label on bytes that are not UTF-8), the bytes are lost and
 * the request is refused rather than stored altered.
 */
class PartWalker {
  private readonly delimiter: Buffer;
  /** Where the next part's `--boundary` line starts; -1 once the parts are exhausted. */
  private at: number;

  constructor(
    private readonly body: Buffer,
    boundary: string,
    private readonly stats: FormStats,
  ) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    const first = this.delimiter.subarray(2);
    const found = body.subarray(0, first.length).equals(first) ? 0 : body.indexOf(this.delimiter);
    this.at = found <= 0 ? found : found + 2;
    stats.scannedBytes += found === -1 ? body.length : this.at + first.length;
  }

  bytesOf(value: string): Buffer | undefined {
    const candidates = /[\u0100-\uffff]/.test(value)
      ? [Buffer.from(value, 'utf8')]
      : [Buffer.from(value, 'latin1'), Buffer.from(value, 'utf8')];
    for (let part = this.next(); part !== undefined; part = this.next()) {
      if (candidates.some((c) => c.equals(part))) return part;
    }
    return undefined;
  }

  /** The body of the next part, or undefined past the last one. */
  private next(): Buffer | undefined {
    const { body, delimiter } = this;
    if (this.at < 0) return undefined;
    const line = this.at + delimiter.length - 2;
    const headersEnd = body[line] === 0x2d && body[line + 1] === 0x2d ? -1 : body.indexOf('\r\n\r\n', line, 'latin1');
    const end = headersEnd === -1 ? -1 : body.indexOf(delimiter, headersEnd + 2);
    this.stats.scannedBytes += (end === -1 ? body.length : end + delimiter.length) - this.at;
    if (end === -1) {
      this.at = -1;
      return undefined;
    }
    this.at = end + 2;
    return body.subarray(headersEnd + 4, end);
  }
}

const refuseLater = (kind: 'too_large' | 'malformed', message: string) => new WebhookRefusal(kind, message);

/** Memoized per request: verify and normalize of one request parse its body once. */
const parsed = new WeakMap<PushRequest, Promise<ParsedForm>>();

export function formOf(req: PushRequest, limit: number): Promise<ParsedForm> {
  let p = parsed.get(req);
  if (!p) {
    p = parseForm(req, limit);
    parsed.set(req, p);
  }
  return p;
}
