/**
 * The admin key of the embedded defaults: generated on the first start and kept in
 * ./data/admin-key (mode 0600, beside the default SQLite store), so that a restart keeps an open
 * console tab signed in. Delete the file for a new key; a key written into it is used as it is.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { GatewayError } from '../errors.js';

export interface EmbeddedAdminKey {
  key: string;
  /** The file that keeps it. */
  path: string;
  /** Whether this start generated it. */
  created: boolean;
}

function readKey(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const key = text.trim();
  if (!/^\S{16,}$/.test(key)) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${path} does not hold an admin key (one line of at least 16 characters without spaces): delete it and a new key is generated on the next start`,
    );
  }
  return key;
}

/** The embedded defaults' admin key under `<cwd>/data`: the kept one, else a new one kept for the next start. */
export function embeddedAdminKey(cwd: string = process.cwd()): EmbeddedAdminKey {
  const dir = resolve(cwd, 'data');
  const path = join(dir, 'admin-key');
  const kept = readKey(path);
  if (kept !== undefined) return { key: kept, path, created: false };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const key = randomBytes(24).toString('base64url');
  // Written whole under another name, then linked into place: a second process starting at the
  // same moment either wins the link or reads the winner's complete key, never half of one.
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temp, `${key}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temp, path);
    return { key, path, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { key: readKey(path)!, path, created: false };
  } finally {
    rmSync(temp, { force: true });
  }
}
