/** The files adapter: .eml, directories, mbox (mboxo/mboxrd/Content-Length), maildir, Outlook .msg. */
export { createFilesAdapter, checkpointKey, DEFAULT_FILES_BATCH_SIZE, type FilesAdapterConfig } from './adapter.js';
export { readInput, readInputs } from './read.js';
export { readMbox } from './mbox.js';
export { msgToRfc822 } from '../../src/mime/msg.js';
export { sniffFile, type FileKind } from './sniff.js';
export type { FileItem, FileMessage, FileFailure, FileOrigin, FilePosition, MboxQuoting, ReadOptions, ResumePoint } from './types.js';
