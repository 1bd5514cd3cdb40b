/**
 * After-delivery actions of one mailbox, for messages the API accepted, by immutable id in
 * `$batch`es: `read` sets isRead, `category:<name>` adds the category to those the message has,
 * `move:<folder>` moves it (a well-known name or a path; a folder that does not exist is
 * MAILGATE_ERR_GRAPH_MOVE_FOLDER, and the caller finishes those actions unapplied). Each is
 * idempotent, so a repeat after a crash is harmless; a message no longer there (404) counts as
 * done. Anything else leaves the actions due (the caller retries with backoff).
 */
import { GatewayError, isGatewayError } from '../../src/errors.js';
import type { Origin } from '../../src/pipeline/types.js';
import { runBatch, type BatchRequest } from './batch.js';
import type { MailboxClient } from './client.js';
import type { AfterDeliveryAction } from './config.js';
import { resolveFolder } from './folders.js';

const message = (user: string, id: string) => `/users/${encodeURIComponent(user)}/messages/${encodeURIComponent(id)}`;

/** The id of the folder messages move to; a folder that does not exist is MAILGATE_ERR_GRAPH_MOVE_FOLDER. */
async function destination(client: MailboxClient, folder: string, signal: AbortSignal): Promise<string> {
  try {
    return await resolveFolder(client, folder, signal);
  } catch (err) {
    if (!isGatewayError(err, 'MAILGATE_ERR_GRAPH_NOT_FOUND')) throw err;
    throw new GatewayError(
      'MAILGATE_ERR_GRAPH_MOVE_FOLDER',
      `the folder "${folder}" of after_delivery move: does not exist in ${client.user} (${err.message})`,
    );
  }
}

/** Applies `action` to the messages of `origins` (all of this mailbox, each with its immutable id as its id). */
export async function applyAction(
  client: MailboxClient,
  action: AfterDeliveryAction,
  origins: Origin[],
  slots: number,
  signal: AbortSignal,
  folderIds: Map<string, string>,
): Promise<void> {
  const ids = [...new Set(origins.map((o) => o.id).filter((id) => id !== ''))];
  if (action.kind === 'none' || ids.length === 0) return;
  const user = client.user;
  let requests: BatchRequest[];
  if (action.kind === 'read') {
    requests = ids.map((id, i) => ({ id: String(i), method: 'PATCH', url: message(user, id), body: { isRead: true } }));
  } else if (action.kind === 'move') {
    let dest = folderIds.get(action.folder);
    if (dest === undefined) folderIds.set(action.folder, (dest = await destination(client, action.folder, signal)));
    requests = ids.map((id, i) => ({ id: String(i), method: 'POST', url: `${message(user, id)}/move`, body: { destinationId: dest } }));
  } else {
    const current = await runBatch(
      client,
      ids.map((id, i) => ({ id: String(i), method: 'GET', url: `${message(user, id)}?$select=categories` })),
      slots,
      signal,
    );
    requests = [];
    ids.forEach((id, i) => {
      const a = current.get(String(i));
      if (a === undefined || a.status === 404) return;
      const have = ((a.body as { categories?: string[] } | undefined)?.categories ?? []).map(String);
      if (!have.includes(action.name))
        requests.push({ id: String(i), method: 'PATCH', url: message(user, id), body: { categories: [...have, action.name] } });
    });
  }
  if (requests.length > 0) await runBatch(client, requests, slots, signal);
}
