/**
 * An upload body → the files it holds: the body itself (message/rfc822, application/mbox, an
 * Outlook PST/OST) or the file parts of a multipart/form-data body, parsed as the bytes come with
 * busboy. A PST/OST (by its name, its declared type or its `!BDN` signature) is spooled to a file
 * in the spool folder as it arrives, never held in memory; the other files are small enough to
 * keep. A file cut by the size limit fails the whole upload with 413: nothing is ever stored truncated.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import busboy from 'busboy';
import { GatewayError, isGatewayError } from '../../src/errors.js';

export type FileKind = 'eml' | 'mbox' | 'msg' | 'pst';

export interface UploadedFile {
  /** The multipart file name; absent for a bare body. */
  name?: string;
  kind: FileKind;
  /** The file's bytes (empty for a spooled PST/OST). */
  bytes: Buffer;
  /** Where a PST/OST was spooled. */
  path?: string;
}

/** Free bytes an unprivileged process may write in a folder's file system. */
export type FreeSpace = (dir: string) => Promise<number>;

const freeSpace: FreeSpace = async (dir) => {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
};

const spoolFull = (message: string) => new GatewayError('MAILGATE_ERR_UPLOAD_SPOOL_FULL', message);

/**
 * The folder an upload's archives are spooled to, made on first use and removed with everything
 * in it. Before the first archive is written, the request's declared length must fit in the
 * folder's free space; a disk that fills while it is written is the same retryable refusal.
 */
export class Spool {
  private dir: Promise<string> | undefined;
  private files = 0;
  private removed = false;

  constructor(
    private readonly parent: string,
    /** The request's declared length (Content-Length): an upper bound of what its archives take. */
    private readonly declaredBytes?: number,
    private readonly free: FreeSpace = freeSpace,
  ) {}

  async file(): Promise<string> {
    if (this.removed) throw new Error('the upload is over');
    if (this.files === 0 && this.declaredBytes !== undefined) await this.checkRoom(this.declaredBytes);
    this.dir ??= mkdtemp(join(this.parent, 'mailgate-upload-'));
    return join(await this.dir, `${++this.files}.pst`);
  }

  /** Writes an archive to a new spool file; its path. */
  async write(source: AsyncIterable<Buffer> | Readable): Promise<string> {
    const path = await this.file();
    try {
      await pipeline(source instanceof Readable ? source : Readable.from(source), createWriteStream(path));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOSPC' || code === 'EDQUOT') throw spoolFull(`the spool folder ${this.parent} filled while the archive was written`);
      throw err;
    }
    return path;
  }

  private async checkRoom(bytes: number): Promise<void> {
    let free: number;
    try {
      free = await this.free(this.parent);
    } catch {
      // Unreadable (the folder missing): making the spool folder reports it.
      return;
    }
    if (bytes > free) throw spoolFull(`the upload declares ${bytes} bytes and the spool folder ${this.parent} has ${free} bytes free`);
  }

  async remove(): Promise<void> {
    this.removed = true;
    if (this.dir === undefined) return;
    await rm(await this.dir.catch(() => ''), { recursive: true, force: true }).catch(() => undefined);
  }
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

const PST_MAGIC = Buffer.from('!BDN');
export const PST_TYPE = 'application/vnd.ms-outlook-pst';

const BY_EXTENSION: Record<string, FileKind> = { eml: 'eml', mbox: 'mbox', mbx: 'mbox', msg: 'msg', pst: 'pst', ost: 'pst' };
const BY_TYPE: Record<string, FileKind> = {
  'message/rfc822': 'eml',
  'application/mbox': 'mbox',
  'application/vnd.ms-outlook': 'msg',
  [PST_TYPE]: 'pst',
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
  if (bytes.subarray(0, 4).equals(PST_MAGIC)) return 'pst';
  if (bytes.subarray(0, 8).equals(OLE2_MAGIC)) return 'msg';
  return bytes.toString('latin1', 0, 5) === 'From ' ? 'mbox' : 'eml';
}

const badRequest = (message: string) => new GatewayError('MAILGATE_ERR_UPLOAD_BAD_REQUEST', message);
const tooLarge = (message: string) => new GatewayError('MAILGATE_ERR_UPLOAD_TOO_LARGE', message);

/** A file part: the first bytes tell its kind; a PST/OST goes on to the spool, anything else into memory. */
async function filePart(stream: Readable, name: string | undefined, type: string, spool: Spool): Promise<UploadedFile> {
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let seen = 0;
  let ended = false;
  while (seen < PST_MAGIC.length && !ended) {
    const r = await chunks.next();
    if (r.done) ended = true;
    else {
      head.push(r.value);
      seen += r.value.length;
    }
  }
  const rest = async function* (): AsyncGenerator<Buffer> {
    yield* head;
    if (ended) return;
    for (let r = await chunks.next(); !r.done; r = await chunks.next()) yield r.value;
  };
  const named = name !== undefined ? { name } : {};
  if (kindOf(name, type, Buffer.concat(head)) === 'pst') {
    const path = await spool.write(rest());
    return { ...named, kind: 'pst', bytes: Buffer.alloc(0), path };
  }
  const all: Buffer[] = [];
  for await (const c of rest()) all.push(c);
  const bytes = Buffer.concat(all);
  return { ...named, kind: kindOf(name, type, bytes), bytes };
}

export function parseMultipart(contentType: string, body: Buffer | Readable, limits: FileLimits, spool?: Spool): Promise<UploadedFile[]> {
  const into = spool ?? new Spool(tmpdir());
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
    const files: Promise<UploadedFile | undefined>[] = [];
    let failure: GatewayError | undefined;
    const fail = (err: GatewayError) => (failure ??= err);
    bb.on('file', (_field, stream, info) => {
      // A cut body also fails the open file stream; bb's own 'error' reports it.
      stream.on('limit', () => fail(tooLarge(`file ${info.filename} exceeds ${limits.maxFileBytes} bytes`)));
      // The name is the client's: kept short, it only labels results and origins.
      const name = info.filename?.slice(0, MAX_NAME_CHARS);
      files.push(
        filePart(stream, name, mediaType(info.mimeType), into).catch((err: unknown) => {
          // No room to spool: the whole upload is refused at once (retryable), the rest unread.
          if (isGatewayError(err, 'MAILGATE_ERR_UPLOAD_SPOOL_FULL')) {
            fail(err);
            stream.resume();
            reject(err);
          }
          return undefined;
        }),
      );
    });
    bb.on('filesLimit', () => fail(tooLarge(`the upload holds more than ${limits.maxFiles} files`)));
    bb.on('fieldsLimit', () => fail(badRequest(`the upload holds more than ${MAX_FIELDS} form fields`)));
    const broken = (err: Error) => reject(failure ?? (isGatewayError(err) ? err : badRequest(`unreadable multipart body: ${err.message}`)));
    bb.on('error', broken);
    bb.on('close', () => {
      void Promise.all(files).then((parts) => {
        if (failure) reject(failure);
        else if (parts.some((p) => p === undefined)) reject(badRequest('a file of the multipart body could not be read'));
        else if (parts.length === 0) reject(badRequest('the multipart body holds no file'));
        else resolve(parts as UploadedFile[]);
      });
    });
    if (Buffer.isBuffer(body)) bb.end(body);
    else {
      body.on('error', (err) => {
        failure ??= isGatewayError(err) ? err : badRequest(`the body was cut: ${err.message}`);
        bb.destroy(failure);
      });
      body.pipe(bb);
    }
  });
}

/** The whole body in memory, for the kinds that are kept there (the server bounds it). */
async function collect(body: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** The files of an upload body by its Content-Type; 415 for a type the endpoint does not take. PSTs go to `spool`. */
export async function uploadedFiles(
  contentType: string | undefined,
  body: Buffer | Readable,
  limits: FileLimits,
  spool: Spool,
): Promise<UploadedFile[]> {
  const type = mediaType(contentType);
  if (type === 'multipart/form-data') return parseMultipart(contentType!, body, limits, spool);
  if (type === PST_TYPE) {
    const path = await spool.write(Buffer.isBuffer(body) ? Readable.from([body]) : body);
    return [{ kind: 'pst', bytes: Buffer.alloc(0), path }];
  }
  if (type !== 'message/rfc822' && type !== 'application/mbox') {
    throw new GatewayError(
      'MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE',
      `Content-Type ${type || '(none)'} is not message/rfc822, application/mbox, ${PST_TYPE} or multipart/form-data`,
    );
  }
  const bytes = await collect(body);
  if (bytes.length === 0) throw badRequest('the body is empty');
  return [{ kind: type === 'message/rfc822' ? 'eml' : 'mbox', bytes }];
}
