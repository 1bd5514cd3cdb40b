/**
 * Turns the configured folder list (names, special-use flags such as `\Inbox` or `\Sent`, or
 * `*`) into mailbox paths on this server.
 */
import type { ImapFlow, ListResponse } from 'imapflow';
import type { AfterDeliveryAction } from './config.js';

function selectable(box: ListResponse): boolean {
  return !box.flags.has('\\Noselect') && !box.flags.has('\\NonExistent');
}

/**
 * Paths in configuration order, without duplicates. `*` expands to every selectable folder,
 * INBOX first, except the destination of a `move:` after-delivery action (moved mail would
 * otherwise be read again under new UIDs). A name the server does not list is kept: the sync
 * reports it as missing and tries again at the next resync.
 */
export function resolveFolders(list: ListResponse[], wanted: readonly string[], action: AfterDeliveryAction): string[] {
  const out: string[] = [];
  const add = (path: string): void => {
    if (!out.includes(path)) out.push(path);
  };
  const moveTarget = action.kind === 'move' ? action.folder : undefined;
  for (const entry of wanted) {
    if (entry === '*') {
      const all = list.filter((b) => selectable(b) && b.path !== moveTarget).map((b) => b.path);
      all.sort((a, b) => (a === 'INBOX' ? -1 : b === 'INBOX' ? 1 : 0));
      all.forEach(add);
    } else if (entry.startsWith('\\')) {
      const flag = entry.toLowerCase();
      if (flag === '\\inbox') add('INBOX');
      for (const b of list) if (selectable(b) && b.specialUse?.toLowerCase() === flag) add(b.path);
    } else {
      add(entry.toUpperCase() === 'INBOX' ? 'INBOX' : entry);
    }
  }
  return out;
}

/**
 * The folders to read: `wanted` resolved on this server, less those `include` refuses
 * (`exclude_folders`, matched with `/` for the server's own separator).
 */
export async function listFolders(
  client: ImapFlow,
  wanted: readonly string[],
  action: AfterDeliveryAction,
  include?: (path: string, separator: string) => boolean,
): Promise<string[]> {
  const needsList = include !== undefined || wanted.some((w) => w === '*' || w.startsWith('\\'));
  const list = needsList ? await client.list() : [];
  const resolved = resolveFolders(list, wanted, action);
  if (include === undefined) return resolved;
  const separator = (path: string) => list.find((b) => b.path === path)?.delimiter ?? list[0]?.delimiter ?? '/';
  return resolved.filter((path) => include(path, separator(path)));
}
