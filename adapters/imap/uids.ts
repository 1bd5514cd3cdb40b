/**
 * UID sets and the checks every answer of the selected folder goes through before it is
 * believed (fetcher.ts, headers-first.ts, actions.ts).
 */
import type { ImapFlow } from 'imapflow';
import { GatewayError } from '../../src/errors.js';

/** "1:5,7,9:12" from ascending UIDs. */
export function uidSet(uids: number[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < uids.length) {
    let j = i;
    while (j + 1 < uids.length && uids[j + 1] === (uids[j] as number) + 1) j++;
    out.push(i === j ? `${uids[i]}` : `${uids[i]}:${uids[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

/**
 * imapflow answers a FETCH or SEARCH on a connection that closed meanwhile with an empty
 * result instead of an error: every answer is checked against this before it is believed.
 */
export function assertSelected(client: ImapFlow, folder: string): void {
  if (!client.usable || client.mailbox === false || client.mailbox.path !== folder) {
    throw new GatewayError('MAILGATE_ERR_IMAP_CONNECTION', `connection lost while reading "${folder}"`);
  }
}

/**
 * UIDs the server did not return must really be gone (expunged meanwhile); a message the
 * server still lists but did not deliver is never skipped: the chunk fails and is retried.
 */
export async function ensureGone(client: ImapFlow, folder: string, uids: number[]): Promise<void> {
  if (uids.length === 0) return;
  const still = await client.search({ uid: uidSet(uids) }, { uid: true });
  assertSelected(client, folder);
  if (!Array.isArray(still)) throw new GatewayError('MAILGATE_ERR_IMAP_COMMAND', `UID SEARCH failed in "${folder}"`);
  const listed = still.filter((u) => uids.includes(u));
  if (listed.length > 0) {
    throw new GatewayError(
      'MAILGATE_ERR_IMAP_COMMAND',
      `the server lists ${listed.length} message(s) in "${folder}" it did not return (UID ${listed[0]})`,
    );
  }
}
