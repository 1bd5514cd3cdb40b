/**
 * The content of the messages a delta page listed, fetched in `$batch`es: the raw MIME
 * (`$value`) of a message without attachments, and for one with attachments its headers, body
 * and attachment metadata (`$select`/`$expand`, assembled by assemble.ts) so that attachment
 * bytes never cross the wire. A message gone meanwhile (404: moved or deleted) is left out; the
 * folder it moved to reads it, or it is gone.
 */
import { ATTACHMENT_EXPAND, assembleMessage, JSON_SELECT, type GraphMessage } from './assemble.js';
import { runBatch, type BatchRequest } from './batch.js';
import type { MailboxClient } from './client.js';

/** What a delta page says of a message (the properties it selects). */
export interface DeltaItem {
  id: string;
  hasAttachments?: boolean;
  internetMessageId?: string;
  receivedDateTime?: string;
  '@removed'?: unknown;
}

export const DELTA_SELECT = 'id,hasAttachments,internetMessageId,receivedDateTime';

export interface Content {
  item: DeltaItem;
  raw: Buffer;
  /** Read through `$select`/`$expand` (attachments as stubs) rather than `$value`. */
  viaJson: boolean;
}

export function contentRequest(user: string, item: DeltaItem, index: number): BatchRequest {
  const base = `/users/${encodeURIComponent(user)}/messages/${encodeURIComponent(item.id)}`;
  if (item.hasAttachments !== true) return { id: String(index), method: 'GET', url: `${base}/$value` };
  return {
    id: String(index),
    method: 'GET',
    url: `${base}?$select=${JSON_SELECT}&$expand=${ATTACHMENT_EXPAND}`,
    headers: { prefer: 'IdType="ImmutableId", outlook.body-content-type="text"' },
  };
}

/** Fetches the content of `items` (in order; those gone meanwhile are left out). */
export async function fetchContents(client: MailboxClient, items: DeltaItem[], slots: number, signal: AbortSignal): Promise<Content[]> {
  if (items.length === 0) return [];
  const requests = items.map((item, i) => contentRequest(client.user, item, i));
  // Every member carries the immutable-id preference too (Graph reads it per request).
  for (const r of requests) r.headers = { prefer: 'IdType="ImmutableId"', ...r.headers };
  const answers = await runBatch(client, requests, slots, signal);
  const out: Content[] = [];
  items.forEach((item, i) => {
    const a = answers.get(String(i));
    if (a === undefined || a.status === 404) return;
    if (item.hasAttachments !== true) {
      out.push({ item, raw: a.raw ?? Buffer.from(typeof a.body === 'string' ? a.body : JSON.stringify(a.body)), viaJson: false });
      return;
    }
    out.push({ item, raw: assembleMessage(a.body as GraphMessage), viaJson: true });
  });
  return out;
}
