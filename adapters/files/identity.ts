/**
 * The identity of a message read from a file: the file's path and the message's index in it.
 * Reading the same file again (a re-run import) yields the same keys, so nothing is stored twice.
 */
import type { FileDetails, FileOrigin } from './types.js';

/**
 * `files:<path>:<index>`; a Google Vault message whose export names its account,
 * `files:<account>:<path>:<index>`: the forms stores written before use (their keys stay valid).
 */
export function fileKey({ details: d }: Pick<FileOrigin, 'details'>): string {
  return d.account === undefined ? `files:${d.path}:${d.index}` : `files:${d.account}:${d.path}:${d.index}`;
}

/** The origin of the message at `index` in the file at `path`: no instance (a file named on the command line has none), the id `<path>:<index>`. */
export function fileOrigin(path: string, index: number, more: Omit<FileDetails, 'path' | 'index'> = {}): FileOrigin {
  return { adapter: 'files', instance: '', id: `${path}:${index}`, details: { path, index, ...more } };
}
