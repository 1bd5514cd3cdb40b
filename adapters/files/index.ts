/** The files adapter: .eml, directories, mbox (mboxo/mboxrd/Content-Length), maildir, Outlook .msg. */
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, PathInputs, PathItem } from '../../src/pipeline/types.js';
import { createFilesAdapter as build } from './adapter.js';
import type { FilesEntry } from './config.js';
import { inputFiles, readInputs as read } from './read.js';
import type { FileItem } from './types.js';

export { filesEntrySchema, type FilesEntry } from './config.js';
export { createFilesAdapter, checkpointKey, FILES_BATCH_SIZE, type FilesAdapterConfig } from './adapter.js';
export { inputFiles, readInput, readInputs, type SizedFile } from './read.js';
export { readMbox } from './mbox.js';
export { RECOGNISERS, SKIP, sniffBytes, sniffFile, type FileKind, type Recogniser, type Sniffed } from './sniff.js';
export type { FileItem, FileMessage, FileFailure, FileOrigin, FilePosition, MboxQuoting, ReadOptions, ResumePoint } from './types.js';

/** The factory of one entry of `adapters.files[]`. Unreadable items are logged as they are kept as dead letters. */
export function create(entry: FilesEntry, ctx: KindContext): Adapter {
  const log = ctx.log;
  return build({
    name: entry.name,
    paths: [...entry.paths],
    route: entry.route,
    maxMessageBytes: ctx.maxMessageBytes,
    // An unreadable input file is expected (a broken .msg): one line with its reason, no stack.
    onError: (item) =>
      log.warn(
        { path: item.origin.details.path, index: item.origin.details.index, code: item.error.code },
        `file item kept as a dead letter: ${item.error.message}`,
      ),
    onSkip: (path, reason) => log.debug({ path, reason }, 'not mail, skipped'),
  });
}

/** The kind's implementation (adapters/files/kind.ts). */
export const implementation: KindImplementation<FilesEntry> = { create };

async function* pathItems(items: AsyncIterable<FileItem>): AsyncGenerator<PathItem> {
  for await (const item of items) yield { ...item, path: item.origin.details.path, index: item.origin.details.index };
}

/** `mailgate import` and `preview`: the files and folders named on the command line. */
export const pathInputs: PathInputs = {
  adapter: ({ onError, ...options }) =>
    build({ ...options, ...(onError ? { onError: (item) => onError(item.origin.details, item.error) } : {}) }),
  read: (paths, options) => pathItems(read(paths, options)),
  files: (paths) => inputFiles(paths),
};
