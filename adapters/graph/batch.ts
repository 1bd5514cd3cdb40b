/**
 * `$batch` for one mailbox (learn.microsoft.com/graph/json-batching): at most 20 requests per
 * batch. Graph runs independent requests of a batch at the same time and counts each against the
 * mailbox's 4-in-flight limit, so a batch of n requests is sent as k = min(n, slots) chains
 * linked by `dependsOn` (request i after request i−k) and takes k slots: never more than k run at
 * once. A request answered 429/503/504 pauses the mailbox for its Retry-After; it and the requests
 * that failed with 424 because of it are sent again in a later batch. Bodies that are not JSON
 * (`$value`) come back base64-encoded and are decoded here.
 */
import { GatewayError } from '../../src/errors.js';
import { graphErrorOf, THROTTLE_STATUSES, type MailboxClient } from './client.js';

export const BATCH_MAX = 20;
/** Times one request of a batch is sent again (throttled, or its dependency failed) before giving up. */
const MAX_ATTEMPTS = 12;

export interface BatchRequest {
  id: string;
  method: 'GET' | 'PATCH' | 'POST';
  /** Relative to the version: `/users/{u}/messages/{id}/$value`. */
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface BatchAnswer {
  status: number;
  /** Parsed JSON, or the decoded bytes of a non-JSON answer. */
  body: unknown;
  raw?: Buffer;
}

interface MemberResponse {
  id: string;
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

/**
 * Sends the requests in batches of at most 20 and resolves with every answer by id. 404 answers
 * are returned (the caller decides: a message moved or deleted meanwhile); other failures throw.
 */
export async function runBatch(
  client: MailboxClient,
  requests: BatchRequest[],
  slots: number,
  signal: AbortSignal,
): Promise<Map<string, BatchAnswer>> {
  const answers = new Map<string, BatchAnswer>();
  const attempts = new Map<string, number>();
  let pending = [...requests];
  while (pending.length > 0) {
    const chunk = pending.slice(0, BATCH_MAX);
    pending = pending.slice(BATCH_MAX);
    const k = Math.min(slots, chunk.length);
    const payload = {
      requests: chunk.map((r, i) => ({
        id: r.id,
        method: r.method,
        url: r.url,
        ...(r.body === undefined ? {} : { body: r.body, headers: { 'content-type': 'application/json', ...r.headers } }),
        ...(r.body === undefined && r.headers ? { headers: r.headers } : {}),
        ...(i >= k ? { dependsOn: [chunk[i - k]!.id] } : {}),
      })),
    };
    const res = await client.request('$batch', { method: 'POST', json: payload, slots: k, signal });
    const responses = parseResponses(res.body);
    const retry: BatchRequest[] = [];
    for (const r of chunk) {
      const m = responses.get(r.id);
      if (m === undefined) throw new GatewayError('MAILGATE_ERR_GRAPH_RESPONSE', `the $batch answer has no response for request ${r.id}`);
      if (m.status < 300 || m.status === 404) {
        answers.set(r.id, decode(m));
        continue;
      }
      const throttled = THROTTLE_STATUSES.has(m.status);
      if (!throttled && m.status !== 424) throw graphErrorOf(m.status, Buffer.from(JSON.stringify(m.body ?? {})), `${r.method} ${r.url}`);
      const n = (attempts.get(r.id) ?? 0) + 1;
      if (n > MAX_ATTEMPTS)
        throw graphErrorOf(m.status, Buffer.from(JSON.stringify(m.body ?? {})), `${r.method} ${r.url} (after ${n - 1} attempts)`);
      attempts.set(r.id, n);
      if (throttled) client.throttled(new Headers(m.headers ?? {}), m.status, n - 1);
      retry.push(r);
    }
    pending = [...retry, ...pending];
  }
  return answers;
}

function parseResponses(body: Buffer): Map<string, MemberResponse> {
  let parsed: { responses?: MemberResponse[] };
  try {
    parsed = JSON.parse(body.toString('utf8')) as { responses?: MemberResponse[] };
  } catch {
    throw new GatewayError('MAILGATE_ERR_GRAPH_RESPONSE', 'the $batch answer is not JSON');
  }
  if (!Array.isArray(parsed.responses)) throw new GatewayError('MAILGATE_ERR_GRAPH_RESPONSE', 'the $batch answer has no responses');
  return new Map(parsed.responses.map((r) => [String(r.id), r]));
}

function decode(m: MemberResponse): BatchAnswer {
  const type = Object.entries(m.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ?? '';
  if (typeof m.body === 'string' && !type.includes('json')) {
    const raw = Buffer.from(m.body, 'base64');
    return { status: m.status, body: raw, raw };
  }
  return { status: m.status, body: m.body };
}
