/**
 * Gmail's batch endpoint (developers.google.com/workspace/gmail/api/guides/batch): one
 * `multipart/mixed` POST to `/batch/gmail/v1` carrying up to `size` calls (Google allows 100 and
 * advises at most 50), each an `application/http` part with its own Content-ID; the answer is a
 * `multipart/mixed` body with one `application/http` response per call, its Content-ID
 * `response-<id>`. Every call costs its own quota units, so a batch takes their sum from the
 * bucket and is sized to fit one second of quota. A call answered with a rate limit pauses the
 * mailbox and is sent again in a later batch; 404 answers are returned (the caller decides: a
 * message deleted meanwhile); other failures throw.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../src/errors.js';
import { gmailError, isRateLimited, parseJson, queryString, type GmailClient, type CallOptions } from './client.js';
import { UNITS, type GmailMethod } from './quota.js';

export interface BatchCall {
  id: string;
  method: GmailMethod;
  /** Relative to the mailbox: `/messages/{id}`. */
  path: string;
  query?: CallOptions['query'];
  /** A POST with this JSON body (messages.modify); none: a GET. */
  body?: unknown;
}

export interface BatchAnswer {
  status: number;
  body: unknown;
}

const MAX_ATTEMPTS = 12;

export async function runBatch(
  client: GmailClient,
  calls: BatchCall[],
  size: number,
  signal: AbortSignal,
): Promise<Map<string, BatchAnswer>> {
  const answers = new Map<string, BatchAnswer>();
  const attempts = new Map<string, number>();
  let pending = [...calls];
  while (pending.length > 0) {
    const per = Math.min(size, client.quota.fits(UNITS[pending[0]!.method]));
    const chunk = pending.slice(0, per);
    pending = pending.slice(per);
    const parts = chunk.length === 1 ? await single(client, chunk[0]!, signal) : await batch(client, chunk, signal);
    const retry: BatchCall[] = [];
    let limited: BatchAnswer | undefined;
    for (const c of chunk) {
      const a = parts.get(c.id);
      if (a === undefined) throw new GatewayError('MAILGATE_ERR_GMAIL_RESPONSE', `the batch answer has no response for call ${c.id}`);
      if (a.status < 300 || a.status === 404) {
        answers.set(c.id, a);
        continue;
      }
      if (!isRateLimited(a.status, a.body)) throw gmailError(a.status, a.body, `${c.method} ${c.path}`);
      const n = (attempts.get(c.id) ?? 0) + 1;
      if (n > MAX_ATTEMPTS) throw gmailError(a.status, a.body, `${c.method} ${c.path} (after ${n - 1} attempts)`);
      attempts.set(c.id, n);
      limited = a;
      retry.push(c);
    }
    if (limited) client.rateLimited(new Headers(), limited.status, limited.body);
    else client.settled();
    pending = [...retry, ...pending];
  }
  return answers;
}

/** A lone call goes without the batch envelope (same units, less parsing). */
async function single(client: GmailClient, c: BatchCall, signal: AbortSignal): Promise<Map<string, BatchAnswer>> {
  try {
    const opts = { query: c.query, signal, ...(c.body === undefined ? {} : { method: 'POST' as const, json: c.body }) };
    return new Map([[c.id, { status: 200, body: await client.call(c.method, c.path, opts) }]]);
  } catch (err) {
    const status = (err as { httpStatus?: number }).httpStatus;
    if (status === 404) return new Map([[c.id, { status, body: undefined }]]);
    throw err;
  }
}

async function batch(client: GmailClient, chunk: BatchCall[], signal: AbortSignal): Promise<Map<string, BatchAnswer>> {
  const boundary = `mailgate_${randomBytes(12).toString('hex')}`;
  const body =
    chunk
      .map(
        (c) =>
          `--${boundary}\r\nContent-Type: application/http\r\nContent-ID: <${c.id}>\r\n\r\n` +
          (c.body === undefined
            ? `GET ${client.base}${c.path}${queryString(c.query)}\r\n\r\n`
            : `POST ${client.base}${c.path}${queryString(c.query)}\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(c.body)}\r\n`),
      )
      .join('') + `--${boundary}--\r\n`;
  const units = chunk.reduce((s, c) => s + UNITS[c.method], 0);
  const res = await client.send(
    `${client.apiUrl}/batch/gmail/v1`,
    units,
    chunk.length,
    { method: 'POST', headers: { 'content-type': `multipart/mixed; boundary=${boundary}` }, body, signal },
    'batch',
  );
  return parseBatch(res.headers.get('content-type') ?? '', res.text);
}

/** The responses of a batch answer by the Content-ID of their call (`response-<id>` → `<id>`). */
export function parseBatch(contentType: string, text: string): Map<string, BatchAnswer> {
  const m = /boundary="?([^";]+)"?/i.exec(contentType);
  if (!m) throw new GatewayError('MAILGATE_ERR_GMAIL_RESPONSE', `the batch answer is not multipart (${contentType})`);
  const out = new Map<string, BatchAnswer>();
  for (const part of text.split(`--${m[1]}`)) {
    const p = part.replace(/^\r?\n/, '');
    if (p.startsWith('--') || p.trim() === '') continue;
    const [outer, ...rest] = p.split(/\r?\n\r?\n/);
    const id = /content-id:\s*<?response-([^>\r\n]+)>?/i.exec(outer ?? '')?.[1];
    const inner = rest.join('\r\n\r\n');
    const status = /^HTTP\/[\d.]+ (\d{3})/.exec(inner)?.[1];
    if (id === undefined || status === undefined) continue;
    const at = inner.search(/\r?\n\r?\n/);
    const payload = at < 0 ? '' : inner.slice(at).trim();
    out.set(id, { status: Number(status), body: parseJson(payload) ?? payload });
  }
  return out;
}
