/**
 * Outlook PST and OST files as file inputs: read off the reading thread under budgets
 * (src/mime/pst-thread.ts), each item with the file's path and its position as its origin
 * (the position is the checkpoint, as the byte offset is for an mbox; docs/archives.md).
 */
import type { PstItem } from '../../src/mime/pst.js';
import { readPstOffThread } from '../../src/mime/pst-thread.js';
import type { FileItem, ReadOptions } from './types.js';
import { fileOrigin } from './identity.js';

function fileItem(path: string, item: PstItem): FileItem {
  const { index, folder, offset, next, receivedAt } = item;
  const base = {
    origin: fileOrigin(path, index, folder !== undefined ? { folder } : {}),
    offset,
    next,
    ...(receivedAt !== undefined && { receivedAt }),
  };
  return item.error === undefined ? { ...base, raw: item.raw } : { ...base, error: item.error };
}

export async function* readPstFile(path: string, options: ReadOptions & { resume?: { index: number } }): AsyncGenerator<FileItem> {
  const read = {
    ...(options.maxMessageBytes !== undefined && { maxMessageBytes: options.maxMessageBytes }),
    ...(options.resume !== undefined && { resume: { index: options.resume.index } }),
    ...(options.onSkip !== undefined && { onSkip: options.onSkip }),
  };
  for await (const item of readPstOffThread(path, read, options.pstBudget)) yield fileItem(path, item);
}
