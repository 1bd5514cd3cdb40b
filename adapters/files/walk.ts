/**
 * Deterministic directory walk: entries sorted by UTF-16 code units, hidden entries skipped,
 * maildirs recognised (cur/ and new/ read, tmp/ skipped, Maildir++ `.Folder` subfolders read).
 */
import { readdir, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';

/**
 * How a walk treats symbolic links. A link to a file is read when its real path lies under the
 * real path of the walked input (a link inside the drop folder); a link leading out of it (to
 * /etc/passwd, to a file of secrets) is skipped and reported, unless `followSymlinks` is set.
 * Links to directories are never followed (a link could loop); they are reported too.
 */
export interface WalkOptions {
  /** Read file links whose target lies outside the input folder too (default false). */
  followSymlinks?: boolean;
  /** Called for every skipped link, with the reason. */
  onSkip?: (path: string, reason: string) => void;
}

interface Walk extends WalkOptions {
  /** Real path of the input folder, with a trailing separator. */
  root: string;
}

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
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
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

/** Whether a file link may be read: a file, and under the root unless links are followed anywhere. */
async function linkVerdict(path: string, walk: Walk): Promise<string | undefined> {
  const real = await realpath(path).catch(() => undefined);
  const info = real === undefined ? undefined : await stat(real).catch(() => undefined);
  if (info === undefined) return 'broken symlink';
  if (info.isDirectory()) return 'symlink to a directory (not followed)';
  if (!info.isFile()) return 'symlink to something that is not a file';
  if (!walk.followSymlinks && !real!.startsWith(walk.root)) return 'symlink to a file outside the input folder (follow_symlinks is off)';
  return undefined;
}

/** Sorted entries; file links are checked by linkVerdict, skipped ones reported. */
async function entries(dir: string, walk: Walk): Promise<Entry[]> {
  const list = await readdir(dir, { withFileTypes: true });
  const out: Entry[] = [];
  for (const d of list.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))) {
    const path = join(dir, d.name);
    if (d.isDirectory()) out.push({ name: d.name, path, dir: true });
    else if (d.isFile()) out.push({ name: d.name, path, dir: false });
    else if (d.isSymbolicLink() && !d.name.startsWith('.')) {
      const refused = await linkVerdict(path, walk);
      if (refused === undefined) out.push({ name: d.name, path, dir: false });
      else walk.onSkip?.(path, refused);
    }
  }
  return out;
}

async function* messagesIn(dir: string, walk: Walk): AsyncGenerator<WalkedFile> {
  for (const e of await entries(dir, walk)) if (!e.dir && !e.name.startsWith('.')) yield { path: e.path, maildir: true };
}

async function* walkMaildir(dir: string, walk: Walk): AsyncGenerator<WalkedFile> {
  for (const e of await entries(dir, walk)) {
    if (!e.dir) continue;
    if (e.name === 'cur' || e.name === 'new') yield* messagesIn(e.path, walk);
    else if (e.name.startsWith('.') && e.name !== '.' && e.name !== '..' && (await isMaildir(e.path))) yield* walkMaildir(e.path, walk);
    else if (!e.name.startsWith('.') && e.name !== 'tmp') yield* walkIn(e.path, walk);
  }
}

async function* walkIn(dir: string, walk: Walk): AsyncGenerator<WalkedFile> {
  if (await isMaildir(dir)) {
    yield* walkMaildir(dir, walk);
    return;
  }
  for (const e of await entries(dir, walk)) {
    if (e.name.startsWith('.')) continue;
    if (e.dir) yield* walkIn(e.path, walk);
    else yield { path: e.path, maildir: false };
  }
}

/** Every candidate file under `dir`, in walk order (links: see WalkOptions). */
export async function* walkDir(dir: string, options: WalkOptions = {}): AsyncGenerator<WalkedFile> {
  const real = await realpath(dir);
  yield* walkIn(dir, { ...options, root: real.endsWith(sep) ? real : real + sep });
}
