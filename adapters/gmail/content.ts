/**
 * The content of listed messages, fetched through the batch endpoint: `format=raw` (the exact
 * RFC 5322 bytes) for ordinary messages, and `format=full` for those larger than
 * `full_format_over_bytes` with attachments — their text parts and attachment metadata, the
 * attachment bytes left on the server (assemble.ts). Which messages those are is asked of Gmail
 * itself with one search (`larger:<bytes> has:attachment`) per listing, so no message is read
 * twice. A message gone meanwhile (404: deleted) is left out.
 */
import { assembleFull, type FullMessage } from './assemble.js';
import { runBatch } from './batch.js';
import type { GmailClient } from './client.js';

export interface MessageRef {
  id: string;
  threadId?: string;
}

export interface Content {
  id: string;
  threadId?: string;
  labelIds: string[];
  /** Epoch ms Gmail received the message (`internalDate`). */
  internalDate?: number;
  raw: Buffer;
  /** Read with format=full (attachments as stubs) rather than format=raw. */
  viaFull: boolean;
}

interface RawMessage extends Omit<FullMessage, 'payload'> {
  raw?: string;
}

export interface FetchOptions {
  batchSize: number;
  signal: AbortSignal;
}

/** The ids of messages over `bytes` with attachments in a label, optionally received after `afterS` (epoch s). */
export async function largeIds(
  client: GmailClient,
  labelId: string,
  bytes: number,
  afterS: number | undefined,
  signal: AbortSignal,
): Promise<Set<string>> {
  const out = new Set<string>();
  const q = [`larger:${bytes}`, 'has:attachment', ...(afterS === undefined ? [] : [`after:${afterS}`])].join(' ');
  let pageToken: string | undefined;
  do {
    const page = await client.call<{ messages?: MessageRef[]; nextPageToken?: string }>('messages.list', '/messages', {
      query: { labelIds: labelId, q, maxResults: 500, pageToken },
      signal,
    });
    for (const m of page.messages ?? []) out.add(m.id);
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return out;
}

/** Fetches the messages of `refs` (in order; those gone meanwhile are left out). */
export async function fetchContents(
  client: GmailClient,
  refs: MessageRef[],
  large: ReadonlySet<string>,
  opts: FetchOptions,
): Promise<Content[]> {
  if (refs.length === 0) return [];
  const calls = refs.map((r, i) => ({
    id: `m${i}`,
    method: 'messages.get' as const,
    path: `/messages/${encodeURIComponent(r.id)}`,
    query: { format: large.has(r.id) ? 'full' : 'raw' },
  }));
  const answers = await runBatch(client, calls, opts.batchSize, opts.signal);
  const out: Content[] = [];
  refs.forEach((r, i) => {
    const a = answers.get(`m${i}`);
    if (a === undefined || a.status === 404) return;
    const m = a.body as RawMessage & FullMessage;
    const internal = Number(m.internalDate);
    const base = {
      id: r.id,
      ...((m.threadId ?? r.threadId) ? { threadId: m.threadId ?? r.threadId } : {}),
      labelIds: m.labelIds ?? [],
      ...(Number.isFinite(internal) ? { internalDate: internal } : {}),
    };
    if (large.has(r.id)) out.push({ ...base, raw: assembleFull(m), viaFull: true });
    else out.push({ ...base, raw: Buffer.from(m.raw ?? '', 'base64url'), viaFull: false });
  });
  return out;
}
