/**
 * multipart/form-data and application/x-www-form-urlencoded bodies parsed from the exact request
 * bytes with busboy, keeping every field's value as the bytes sent.
 *
 * busboy decodes field values to strings. With `latin1` as the default charset every byte maps
 * to one char, so `Buffer.from(value, 'latin1')` restores the bytes; a multipart part that labels
 * its own charset is decoded with it, and is restored by multipartFieldBytes below.
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

/** Parses the body of `req`; `limit` bounds each field and file (normally the body limit). */
export async function parseForm(req: PushRequest, limit: number): Promise<ParsedForm> {
  const headers = busboyHeaders(req);
  return new Promise((resolve, reject) => {
    const fields: Array<[string, Buffer]> = [];
    const files: Array<[string, FormFile]> = [];
    let failed = false;
    const fail = (err: unknown) => {
      if (!failed) reject(err);
      failed = true;
    };
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers,
        defCharset: 'latin1',
        defParamCharset: 'latin1',
        limits: { fieldSize: limit, fileSize: limit, fieldNameSize: FIELD_NAME_LIMIT },
      });
    } catch {
      return refuse('malformed', 'the form Content-Type has no usable boundary');
    }
    const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(headers['content-type']!);
    const multipart = boundary ? (boundary[1] ?? boundary[2]!) : undefined;
    bb.on('field', (name, value, info) => {
      if (info.valueTruncated || info.nameTruncated)
        return fail(refuseLater('too_large', `form field "${utf8Of(name)}" exceeds ${limit} bytes`));
      const bytes = multipart !== undefined ? multipartFieldBytes(value, req.body, multipart) : Buffer.from(value, 'latin1');
      if (bytes) fields.push([utf8Of(name), bytes]);
      else fail(refuseLater('malformed', `form field "${utf8Of(name)}" declares a charset its bytes are not in`));
    });
    bb.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('limit', () => fail(refuseLater('too_large', `form file "${utf8Of(name)}" exceeds ${limit} bytes`)));
      stream.on('close', () => {
        const filename = info.filename === undefined ? undefined : utf8Of(info.filename);
        files.push([utf8Of(name), { filename, mimeType: info.mimeType, data: Buffer.concat(chunks) }]);
      });
    });
    bb.on('error', () => fail(refuseLater('malformed', 'the form body is truncated or broken')));
    bb.on('close', () => {
      if (!failed) resolve(form(fields, files));
    });
    bb.end(req.body);
  });
}

/**
 * The sent bytes of a multipart field. busboy decodes a part that labels its own charset with
 * that charset instead of latin1: a UTF-8 label gives a string whose latin1 encoding is not the
 * bytes sent. Each candidate encoding is looked up as a whole part body in the request (between
 * the blank line ending the part headers and the next delimiter); the one found is the bytes
 * sent. When none is (a UTF-8 label on bytes that are not UTF-8), the bytes are lost and the
 * request is refused rather than stored altered.
 */
function multipartFieldBytes(value: string, body: Buffer, boundary: string): Buffer | undefined {
  const candidates = /[\u0100-\uffff]/.test(value)
    ? [Buffer.from(value, 'utf8')]
    : [Buffer.from(value, 'latin1'), Buffer.from(value, 'utf8')];
  const before = Buffer.from('\r\n\r\n');
  const after = Buffer.from(`\r\n--${boundary}`, 'latin1');
  return candidates.find((c) => body.includes(Buffer.concat([before, c, after])));
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
