/**
 * After-delivery actions (opt-in): once the API accepted messages, mark them `\Seen`, add a
 * keyword, or move them. Only by UID and only while the folder's UIDVALIDITY is still the one
 * the message was read under; batched per folder.
 */
import type { ImapFlow } from 'imapflow';
import { GatewayError } from '../../src/errors.js';
import type { Origin } from '../../src/pipeline/types.js';
import type { AfterDeliveryAction } from './config.js';
import { assertSelected, uidSet } from './uids.js';
import { imapDetails } from './identity.js';

export interface AfterDeliveryResult {
  /** Origins the action was applied to (or that needed none). */
  applied: Origin[];
  /** Origins left alone for good: another UIDVALIDITY now, or not from this adapter's accounts. */
  skipped: Origin[];
  /** Origins whose account could not apply its action now (no connection, a failed command): still due. */
  deferred: Origin[];
}

/** UIDs per STORE / MOVE command. */
const UIDS_PER_COMMAND = 500;

interface Group {
  folder: string;
  uidValidity: number;
  origins: Origin[];
  uids: number[];
}

export function groupOrigins(account: string, origins: Origin[]): { groups: Group[]; foreign: Origin[] } {
  const groups = new Map<string, Group>();
  const foreign: Origin[] = [];
  for (const o of origins) {
    const d = imapDetails(o, account);
    if (d === undefined) {
      foreign.push(o);
      continue;
    }
    const key = `${d.uidValidity}\u0000${d.folder}`;
    const g = groups.get(key) ?? { folder: d.folder, uidValidity: d.uidValidity, origins: [], uids: [] };
    g.origins.push(o);
    g.uids.push(d.uid);
    groups.set(key, g);
  }
  return { groups: [...groups.values()], foreign };
}

async function apply(client: ImapFlow, action: AfterDeliveryAction, folder: string, uids: string): Promise<void> {
  let ok: boolean;
  if (action.kind === 'seen') ok = await client.messageFlagsAdd(uids, ['\\Seen'], { uid: true, silent: true });
  else if (action.kind === 'flag') ok = await client.messageFlagsAdd(uids, [action.keyword], { uid: true, silent: true });
  else if (action.kind === 'move') {
    let moved = await client.messageMove(uids, action.folder, { uid: true }).catch(() => false as const);
    if (moved === false && client.usable) {
      // The destination may not exist yet (NO [TRYCREATE]): create it and try once more.
      await client.mailboxCreate(action.folder).catch(() => undefined);
      moved = await client.messageMove(uids, action.folder, { uid: true });
    }
    ok = moved !== false;
  } else ok = true;
  assertSelected(client, folder);
  if (!ok) throw new GatewayError('MAILGATE_ERR_IMAP_COMMAND', `after-delivery ${action.kind} failed in "${folder}" for UIDs ${uids}`);
}

export async function runAfterDelivery(
  client: ImapFlow,
  action: AfterDeliveryAction,
  groups: Group[],
): Promise<Omit<AfterDeliveryResult, 'deferred'>> {
  const applied: Origin[] = [];
  const skipped: Origin[] = [];
  for (const g of groups) {
    const lock = await client.getMailboxLock(g.folder);
    try {
      assertSelected(client, g.folder);
      const box = client.mailbox as Exclude<ImapFlow['mailbox'], false>;
      if (Number(box.uidValidity) !== g.uidValidity) {
        skipped.push(...g.origins);
        continue;
      }
      const uids = [...new Set(g.uids)].sort((a, b) => a - b);
      for (let i = 0; i < uids.length; i += UIDS_PER_COMMAND) {
        await apply(client, action, g.folder, uidSet(uids.slice(i, i + UIDS_PER_COMMAND)));
      }
      applied.push(...g.origins);
    } finally {
      lock.release();
    }
  }
  return { applied, skipped };
}
