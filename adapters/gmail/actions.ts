/**
 * After-delivery actions of one mailbox, for messages the API accepted, by Gmail message id:
 * `read` removes UNREAD, `archive` removes INBOX, `label:<name>` adds the label (created when the
 * mailbox has none of that name). One `messages.batchModify` (50 quota units, up to 1,000 ids)
 * per action; when it is refused (an id no longer there), each message is modified on its own
 * through the batch endpoint and a message gone (404) counts as done. Each action is idempotent,
 * so a repeat after a crash is harmless. Anything else leaves the actions due (retried later).
 */
import type { Origin } from '../../src/pipeline/types.js';
import { runBatch } from './batch.js';
import { GmailHttpError, type GmailClient } from './client.js';
import type { AfterDeliveryAction } from './config.js';

const BATCH_MODIFY_MAX = 1000;

export interface LabelChange {
  addLabelIds?: string[];
  removeLabelIds?: string[];
}

/** The label change of an action (a label looked up, or created, by name). */
async function changeFor(
  client: GmailClient,
  action: AfterDeliveryAction,
  labelIds: Map<string, string>,
  signal: AbortSignal,
): Promise<LabelChange | undefined> {
  if (action.kind === 'read') return { removeLabelIds: ['UNREAD'] };
  if (action.kind === 'archive') return { removeLabelIds: ['INBOX'] };
  if (action.kind !== 'label') return undefined;
  let id = labelIds.get(action.name);
  if (id === undefined) {
    const all = (await client.call<{ labels?: Array<{ id: string; name: string }> }>('labels.list', '/labels', { signal })).labels ?? [];
    id = all.find((l) => l.name === action.name || l.id === action.name)?.id;
    if (id === undefined)
      id = (await client.call<{ id: string }>('labels.create', '/labels', { method: 'POST', json: { name: action.name }, signal })).id;
    labelIds.set(action.name, id);
  }
  return { addLabelIds: [id] };
}

/** Applies `action` to the messages of `origins` (all of this mailbox, each with its Gmail id as its id). */
export async function applyAction(
  client: GmailClient,
  action: AfterDeliveryAction,
  origins: Origin[],
  batchSize: number,
  signal: AbortSignal,
  labelIds: Map<string, string>,
): Promise<void> {
  const ids = [...new Set(origins.map((o) => o.id).filter((id) => id !== ''))];
  const change = await changeFor(client, action, labelIds, signal);
  if (change === undefined || ids.length === 0) return;
  for (let i = 0; i < ids.length; i += BATCH_MODIFY_MAX) {
    const chunk = ids.slice(i, i + BATCH_MODIFY_MAX);
    try {
      await client.call('messages.batchModify', '/messages/batchModify', { method: 'POST', json: { ids: chunk, ...change }, signal });
    } catch (err) {
      if (!(err instanceof GmailHttpError) || (err.httpStatus !== 400 && err.httpStatus !== 404)) throw err;
      const calls = chunk.map((id, k) => ({
        id: `a${k}`,
        method: 'messages.modify' as const,
        path: `/messages/${encodeURIComponent(id)}/modify`,
        body: change,
      }));
      await runBatch(client, calls, batchSize, signal);
    }
  }
}
