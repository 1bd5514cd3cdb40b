/**
 * Attack: a symlink in a drop folder pointing at /etc/passwd or at a file of secrets was read
 * as an email, and its content would have been sent to the API. Links leading out of the input
 * folder are skipped and reported unless followSymlinks is set; links inside it are read; a
 * file named as an input is the user's explicit choice and is read.
 */
import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readInput } from '../../adapters/files/read.js';
import type { ReadOptions } from '../../adapters/files/types.js';

let base: string;
let drop: string;
let secret: string;

async function read(input: string, options: ReadOptions = {}): Promise<{ paths: string[]; skipped: Array<[string, string]> }> {
  const skipped: Array<[string, string]> = [];
  const paths: string[] = [];
  for await (const item of readInput(input, { ...options, onSkip: (p, r) => skipped.push([p, r]) }))
    paths.push(item.origin.details['path']);
  return { paths, skipped };
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'mailgate-links-'));
  drop = join(base, 'drop');
  await mkdir(join(drop, 'sub'), { recursive: true });
  secret = join(base, 'secrets.eml');
  await writeFile(secret, 'From: ops@example.com\nSubject: credentials\n\nroot password: hunter2\n');
  await writeFile(join(drop, 'sub', 'real.eml'), 'From: a@example.com\nSubject: real\n\nhi\n');
  await symlink('/etc/passwd', join(drop, 'a-passwd.eml'));
  await symlink(secret, join(drop, 'b-secrets.eml'));
  await symlink(join(drop, 'sub', 'real.eml'), join(drop, 'c-inside.eml'));
  await symlink(base, join(drop, 'd-dir-link'));
  await symlink(join(base, 'missing'), join(drop, 'e-broken.eml'));
});

describe('symlinks in an input folder', () => {
  it('links out of the folder are skipped with a reason; a link inside it is read', async () => {
    const { paths, skipped } = await read(drop);
    expect(paths).toEqual([join(drop, 'c-inside.eml'), join(drop, 'sub', 'real.eml')]);
    expect(skipped.map(([p]) => p)).toEqual(['a-passwd.eml', 'b-secrets.eml', 'd-dir-link', 'e-broken.eml'].map((n) => join(drop, n)));
    expect(skipped[0]![1]).toMatch(/outside the input folder/);
    expect(skipped[2]![1]).toMatch(/directory/);
    expect(skipped[3]![1]).toMatch(/broken/);
  });

  it('followSymlinks reads file links anywhere (directory links stay unfollowed)', async () => {
    const { paths } = await read(drop, { followSymlinks: true });
    expect(paths).toContain(join(drop, 'b-secrets.eml'));
    expect(paths).not.toContain(join(drop, 'd-dir-link'));
  });

  it('a link named directly as an input is read: the user chose it', async () => {
    const { paths, skipped } = await read(join(drop, 'b-secrets.eml'));
    expect(paths).toEqual([join(drop, 'b-secrets.eml')]);
    expect(skipped).toEqual([]);
  });

  it('an input folder reached through a link is walked as the folder it names', async () => {
    const alias = join(base, 'alias');
    await symlink(drop, alias);
    const { paths } = await read(alias);
    expect(paths).toEqual([join(alias, 'c-inside.eml'), join(alias, 'sub', 'real.eml')]);
  });
});
