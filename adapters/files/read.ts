/** Inputs → items: one file of any kind, or a directory walked recursively. */
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, resolve, sep } from 'node:path';
import { GatewayError } from '../../src/errors.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/limits.js';
import { readMbox } from './mbox.js';
import { isVaultDir } from './vault-dir.js';
import { damagedMessage, notMailMessage } from '../../src/mime/sniff.js';
import { sniffFile, type Sniffed } from './sniff.js';
import type { FileItem, FilePosition, ReadOptions } from './types.js';
import { fileOrigin } from './identity.js';
import { walkDir } from './walk.js';

function failure(path: string, error: GatewayError, index = 0): FileItem {
  return { origin: fileOrigin(path, index), offset: 0, next: { index: index + 1, offset: 0 }, error };
}

function unreadable(path: string, err: unknown): GatewayError {
  const message =
    (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? `no such file or directory: ${path}`
      : `cannot read ${path}: ${(err as Error).message}`;
  return new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', message, { cause: err });
}

/** Maildir file names start with the delivery time in seconds (`1714550400.M1P1.host:2,S`). */
/**
 * The readers of archive formats, each loaded the first time a file of its kind is met: their
 * libraries (PST, Outlook .msg, zip and XML) cost a process start about 0.15 s of CPU, which an
 * import of mbox or .eml files never needs.
 */
const formats = {
  vault: () => import('./vault.js'),
  pst: () => import('./pst.js'),
  msg: () => import('../../src/mime/msg-convert.js'),
};

const MAILDIR_TIME_RE = /^(\d{9,11})\./;

/** When a single-message file arrived: a maildir name's leading seconds, else its modification time. */
function arrival(path: string, maildir: boolean, mtime: Date): Date {
  const m = maildir ? MAILDIR_TIME_RE.exec(basename(path)) : null;
  return m === null ? mtime : new Date(Number(m[1]) * 1000);
}

/** A file holding one message (.eml, maildir entry, .msg): size budget first, then the bytes. */
async function* readSingle(path: string, kind: 'eml' | 'msg', maxBytes: number, maildir: boolean): AsyncGenerator<FileItem> {
  const info = await stat(path);
  const size = info.size;
  const base = {
    origin: fileOrigin(path, 0),
    offset: 0,
    next: { index: 1, offset: size },
    receivedAt: arrival(path, maildir, info.mtime),
  };
  if (size > maxBytes) {
    const error = new GatewayError('MAILGATE_ERR_MIME_TOO_LARGE', `${path} is larger than ${maxBytes} bytes`, { details: { size } });
    yield { ...base, error };
    return;
  }
  const bytes = await readFile(path);
  if (kind === 'eml') {
    yield { ...base, raw: bytes };
    return;
  }
  let raw: Buffer;
  try {
    raw = await (await formats.msg()).convertMsg(bytes, path);
  } catch (err) {
    yield { ...base, bytes, error: err as GatewayError };
    return;
  }
  yield { ...base, raw };
}

/**
 * The reader of a sniffed file. Not a generator of its own: readOneFile iterates the reader it
 * returns directly, so that each message of an mbox passes one generator fewer on its way.
 */
async function readKnown(
  path: string,
  sniffed: Sniffed,
  options: ReadOptions,
  resume: FilePosition | undefined,
  explicit: boolean,
  maildir: boolean,
): Promise<AsyncIterable<FileItem> | Iterable<FileItem>> {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  if ('kind' in sniffed && sniffed.kind === 'mbox') return readMbox(path, { ...options, resume });
  if ('skip' in sniffed && extname(path).toLowerCase() === '.zip' && (await (await formats.vault()).isVaultZip(path))) {
    return (await formats.vault()).readVault(path, true, { ...options, resume });
  }
  if ('kind' in sniffed && sniffed.kind === 'pst') return (await formats.pst()).readPstFile(path, { ...options, resume });
  if (resume && resume.index >= 1) return [];
  if ('kind' in sniffed) return readSingle(path, sniffed.kind === 'msg' ? 'msg' : 'eml', maxBytes, maildir);
  if ('damaged' in sniffed) return damaged(path, sniffed.damaged, maxBytes);
  if (explicit) {
    const error = new GatewayError('MAILGATE_ERR_INPUT_UNSUPPORTED', notMailMessage(path, sniffed.skip), {
      details: { reason: sniffed.skip },
    });
    return [failure(path, error)];
  }
  options.onSkip?.(path, sniffed.skip);
  return [];
}

/** A file named as mail that is not: a dead letter with its bytes (within the size budget). */
async function* damaged(path: string, why: string, maxBytes: number): AsyncGenerator<FileItem> {
  const size = (await stat(path)).size;
  const bytes = size > maxBytes ? undefined : await readFile(path);
  const error = new GatewayError('MAILGATE_ERR_MIME_NOT_EMAIL', damagedMessage(path, why));
  yield { ...failure(path, error), next: { index: 1, offset: size }, ...(bytes ? { bytes } : {}) };
}

/** Reads one file; any failure becomes an item, never an exception. */
async function* readOneFile(path: string, options: ReadOptions, explicit: boolean, maildir: boolean): AsyncGenerator<FileItem> {
  const resumeFrom = options.resumeFrom;
  const resume =
    resumeFrom && resolve(resumeFrom.path) === resolve(path) ? { index: resumeFrom.index, offset: resumeFrom.offset ?? 0 } : undefined;
  let sniffed: Sniffed;
  try {
    sniffed = maildir ? { kind: 'eml' } : await sniffFile(path);
  } catch (err) {
    yield failure(path, unreadable(path, err));
    return;
  }
  try {
    yield* await readKnown(path, sniffed, options, resume, explicit, maildir);
  } catch (err) {
    yield failure(path, unreadable(path, err));
  }
}

/**
 * One input path: a file (any kind) or a directory (walked, sorted, hidden entries skipped).
 * A directory is walked whole on every run, also before the resume point: a file may have
 * been added there since (a maildir's new mail sorts anywhere). The files read before stay
 * cheap: their messages are known to the store, and intake does not parse them again. The
 * file the resume point names continues where it stopped.
 */
export async function* readInput(input: string, options: ReadOptions = {}): AsyncGenerator<FileItem> {
  let isDirectory: boolean;
  try {
    isDirectory = (await stat(input)).isDirectory();
  } catch (err) {
    yield failure(input, unreadable(input, err));
    return;
  }
  if (!isDirectory) {
    yield* readOneFile(input, options, true, false);
    return;
  }
  if (await isVaultDir(input)) {
    const r = options.resumeFrom;
    yield* (await formats.vault()).readVault(input, false, {
      ...options,
      resume: r && resolve(r.path) === resolve(input) ? { index: r.index } : undefined,
    });
    return;
  }
  try {
    const walk = { followSymlinks: options.followSymlinks === true, onSkip: options.onSkip };
    for await (const file of walkDir(input, walk)) yield* readOneFile(file.path, options, false, file.maildir);
  } catch (err) {
    yield failure(input, unreadable(input, err));
  }
}

/** Whether an input contains (or is) the resume path. */
function holds(input: string, path: string): boolean {
  const a = resolve(input);
  const b = resolve(path);
  return a === b || b.startsWith(a.endsWith(sep) ? a : a + sep);
}

/**
 * Every input in order. With `resumeFrom`, inputs before the one holding the resume path are
 * skipped, that input continues from the resume point, later inputs are read whole.
 */
export async function* readInputs(paths: string[], options: ReadOptions = {}): AsyncGenerator<FileItem> {
  const r = options.resumeFrom;
  const at = r === undefined ? -1 : paths.findIndex((p) => holds(p, r.path));
  for (const [i, path] of paths.entries()) {
    if (i < at) continue;
    yield* readInput(path, i === at ? options : { ...options, resumeFrom: undefined });
  }
}

/** A file a read visits, with its size in bytes. */
export interface SizedFile {
  path: string;
  size: number;
}

/**
 * Every file a read of `paths` visits, in the same order, with its size: the total a progress
 * bar measures against. Inputs that cannot be read are left out (the read reports them).
 */
export async function* inputFiles(paths: string[], options: Pick<ReadOptions, 'followSymlinks'> = {}): AsyncGenerator<SizedFile> {
  const sized = async (path: string) =>
    stat(path).then(
      (s) => ({ path, size: s.size }),
      () => undefined,
    );
  for (const input of paths) {
    const info = await stat(input).catch(() => undefined);
    if (info === undefined) continue;
    if (!info.isDirectory()) {
      yield { path: input, size: info.size };
      continue;
    }
    try {
      for await (const file of walkDir(input, { followSymlinks: options.followSymlinks === true })) {
        const s = await sized(file.path);
        if (s !== undefined) yield s;
      }
    } catch {
      // A directory that cannot be listed: the read reports it; the total leaves it out.
    }
  }
}
