/**
 * The identity of a message read from a file: the file's path and the message's index in it.
 * Reading the same file again (a re-run import) yields the same keys, so nothing is stored twice.
 */
import type { FileOrigin } from './types.js';

/**
 * `files:<path>:<index>`; a Google Vault message whose export names its account,
 * `files:<account>:<path>:<index>`: the forms stores written before use (their keys stay valid).
 */
export function fileKey(origin: Pick<FileOrigin, 'path' | 'index' | 'account'>): string {
  return origin.account === undefined ? `files:${origin.path}:${origin.index}` : `files:${origin.account}:${origin.path}:${origin.index}`;
}
