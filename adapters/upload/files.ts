/**
 * An upload body → the files it holds: the body itself (message/rfc822, application/mbox) or
 * the file parts of a multipart/form-data body, parsed from the exact bytes with busboy. A file
 * cut by the size limit fails the whole upload with 413: nothing is ever stored truncated.
 */
import busboy from 'busboy';
import { GatewayError } from '../../src/errors.js';

export type FileKind = 'eml' | 'mbox' | 'msg';

export interface UploadedFile {
  /** The multipart file name; absent for a bare message/rfc822 or mbox body. */
  name?: string;
  kind: FileKind;
  bytes: Buffer;
}

export interface FileLimits {
  maxFileBytes: number;
  maxFiles: number;
}

/** Non-file form fields are ignored; this many (and this large) are tolerated. */
const MAX_FIELDS = 100;
const MAX_FIELD_BYTES = 64 * 1024;
const MAX_NAME_CHARS = 255;
const OLE2_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const BY_EXTENSION: Record<string, FileKind> = { eml: 'eml', mbox: 'mbox', mbx: 'mbox', msg: 'msg' };
const BY_TYPE: Record<string, FileKind> = {
  'message/rfc822': 'eml',
  'application/mbox': 'mbox',
  'application/vnd.ms-outlook': 'msg',
};

export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The kind of a file part: its extension, else its declared type, else its first bytes. */
export function kindOf(name: string | undefined, type: string, bytes: Buffer): FileKind {
  const dot = name?.lastIndexOf('.') ?? -1;
  const ext = dot >= 0 ? name!.slice(dot + 1).toLowerCase() : '';
  const known = BY_EXTENSION[ext] ?? BY_TYPE[type];
  if (known) return known;
  if (bytes.subarray(0, 8).equals(OLE2_MAGIC)) return 'msg';
  return bytes.toString('latin1', 0, 5) === 'From ' ? 'mbox' : 'eml';
}

const badRequest = (message: string) => new GatewayError('MAILGATE_ERR_UPLOAD_BAD_REQUEST', message);
const tooLarge = (message: string) => new GatewayError('MAILGATE_ERR_UPLOAD_TOO_LARGE', message);

export function parseMultipart(contentType: string, body: Buffer, limits: FileLimits): Promise<UploadedFile[]> {
  return new Promise((resolve, reject) => {
    let bb: busboy.Busboy;
    try {
      bb = busboy({
        headers: { 'content-type': contentType },
        defParamCharset: 'utf8',
        limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles, fields: MAX_FIELDS, fieldSize: MAX_FIELD_BYTES },
      });
    } catch (err) {
      reject(badRequest(`unusable multipart Content-Type: ${(err as Error).message}`));
      return;
    }
    const files: UploadedFile[] = [];
    let failure: GatewayError | undefined;
    const fail = (err: GatewayError) => (failure ??= err);
    bb.on('file', (_field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      // A cut body also fails the open file stream; bb's own 'error' reports it.
      stream.on('error', () => undefined);
      stream.on('limit', () => fail(tooLarge(`file ${info.filename} exceeds ${limits.maxFileBytes} bytes`)));
      stream.on('end', () => {
        const bytes = Buffer.concat(chunks);
        // The name is the client's: kept short, it only labels results and origins.
        const name = info.filename?.slice(0, MAX_NAME_CHARS);
        files.push({ name, kind: kindOf(name, mediaType(info.mimeType), bytes), bytes });
      });
    });
    bb.on('filesLimit', () => fail(tooLarge(`the upload holds more than ${limits.maxFiles} files`)));
    bb.on('fieldsLimit', () => fail(badRequest(`the upload holds more than ${MAX_FIELDS} form fields`)));
    bb.on('error', (err: Error) => reject(failure ?? badRequest(`unreadable multipart body: ${err.message}`)));
    bb.on('close', () => {
      if (failure) reject(failure);
      else if (files.length === 0) reject(badRequest('the multipart body holds no file'));
      else resolve(files);
    });
    bb.end(body);
  });
}

/** The files of an upload body by its Content-Type; 415 for a type the endpoint does not take. */
export async function uploadedFiles(contentType: string | undefined, body: Buffer, limits: FileLimits): Promise<UploadedFile[]> {
  const type = mediaType(contentType);
  if (type === 'multipart/form-data') return parseMultipart(contentType!, body, limits);
  if (body.length === 0) throw badRequest('the body is empty');
  if (type === 'message/rfc822') return [{ kind: 'eml', bytes: body }];
  if (type === 'application/mbox') return [{ kind: 'mbox', bytes: body }];
  throw new GatewayError(
    'MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE',
    `Content-Type ${type || '(none)'} is not message/rfc822, application/mbox or multipart/form-data`,
  );
}
