/**
 * Deterministic directory walk: entries sorted by UTF-16 code units, hidden entries skipped,
 * maildirs recognised (cur/ and new/ read, tmp/ skipped, Maildir++ `.Folder` subfolders read).
 */
import { readdir, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

export interface WalkedFile {
  path: string;
  /** True for a file inside a maildir's cur/ or new/: one message, no sniffing needed. */
  maildir: boolean;
}

/** Orders paths the way the walk visits them: segment by segment, by code units. */
export function comparePaths(a: string, b: string): number {
  const as = a.split(sep);
  const bs = b.split(sep);
  for (let i = 0; i < Math.min(as.length, bs.length); i++) {
    if (as[i] !== bs[i]) return as[i]! < bs[i]! ? -1 : 1;
  }
  return as.length - bs.length;
}

async function isDir(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

/** A maildir holds `cur` and `new` directories (`tmp` is optional in exports). */
export async function isMaildir(dir: string): Promise<boolean> {
  return (await isDir(join(dir, 'cur'))) && (await isDir(join(dir, 'new')));
}

interface Entry {
  name: string;
  path: string;
  dir: boolean;
}

/** Sorted entries; symlinks are followed for files only (a linked directory could loop). */
async function entries(dir: string): Promise<Entry[]> {
  const list = await readdir(dir, { withFileTypes: true });
  const out: Entry[] = [];
  for (const d of list.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
    const path = join(dir, d.name);
    if (d.isDirectory()) out.push({ name: d.name, path, dir: true });
    else if (d.isFile()) out.push({ name: d.name, path, dir: false });
    else if (d.isSymbolicLink() && (await stat(path).then((s) => s.isFile(), () => false))) out.push({ name: d.name, path, dir: false });
  }
  return out;
}

async function* messagesIn(dir: string): AsyncGenerator<WalkedFile> {
  for (const e of await entries(dir)) if (!e.dir && !e.name.startsWith('.')) yield { path: e.path, maildir: true };
}

async function* walkMaildir(dir: string): AsyncGenerator<WalkedFile> {
  for (const e of await entries(dir)) {
    if (!e.dir) continue;
    if (e.name === 'cur' || e.name === 'new') yield* messagesIn(e.path);
    else if (e.name.startsWith('.') && e.name !== '.' && e.name !== '..' && (await isMaildir(e.path))) yield* walkMaildir(e.path);
    else if (!e.name.startsWith('.') && e.name !== 'tmp') yield* walkDir(e.path);
  }
}

/** Every candidate file under `dir`, in walk order. */
export async function* walkDir(dir: string): AsyncGenerator<WalkedFile> {
  if (await isMaildir(dir)) {
    yield* walkMaildir(dir);
    return;
  }
  for (const e of await entries(dir)) {
    if (e.name.startsWith('.')) continue;
    if (e.dir) yield* walkDir(e.path);
    else yield { path: e.path, maildir: false };
  }
}
