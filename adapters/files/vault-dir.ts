/**
 * Whether a folder is an unpacked Google Vault export (./vault.ts), without loading the export's
 * reader: every folder named to `import` is asked, most of them are not one.
 */
import { readdir } from 'node:fs/promises';

export const METADATA_RE = /-metadata\.xml$/i;
export const MBOX_RE = /\.mbox$/i;

/** Whether a folder is an unpacked Vault export: it holds a `…-metadata.xml` and an mbox. */
export async function isVaultDir(dir: string): Promise<boolean> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.some((n) => METADATA_RE.test(n)) && names.some((n) => MBOX_RE.test(n));
}
