/**
 * Small helpers for the emulator tests: raw-email documents and a fetch wrapper.
 */
import type { RawEmailDocument } from '../../src/model/index.js';

export interface MailSpec {
  messageId?: string | null;
  subject?: string;
  body?: string;
  from?: string;
  to?: string;
  date?: string;
  inReplyTo?: string;
  references?: string;
  props?: Record<string, string | number>;
  commentId?: string;
}

let counter = 0;

/** A document with raw headers and a plain body; a fresh Message-ID unless one is given (null: none). */
export function mail(spec: MailSpec = {}): RawEmailDocument {
  counter += 1;
  const messageId = spec.messageId === undefined ? `<m${counter}.${Date.now()}@example.com>` : spec.messageId;
  const lines = [
    `From: ${spec.from ?? 'Alice <alice@example.com>'}`,
    `To: ${spec.to ?? 'support@example.org'}`,
    `Subject: ${spec.subject ?? 'Hello'}`,
    `Date: ${spec.date ?? 'Tue, 05 Mar 2024 10:00:00 +0000'}`,
  ];
  if (messageId !== null) lines.push(`Message-ID: ${messageId}`);
  if (spec.inReplyTo !== undefined) lines.push(`In-Reply-To: ${spec.inReplyTo}`);
  if (spec.references !== undefined) lines.push(`References: ${spec.references}`);
  const doc: RawEmailDocument = {
    raw_email: { headers: { raw: lines.join('\r\n') }, body: { plain: spec.body ?? 'Just saying hello.' } },
  };
  if (spec.props !== undefined) doc.user_properties = spec.props;
  if (spec.commentId !== undefined) doc.comment_id = spec.commentId;
  return doc;
}

export const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export interface Client {
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  get(path: string): Promise<Answer>;
  put(path: string, body: unknown): Promise<Answer>;
  post(path: string, body: unknown): Promise<Answer>;
  del(path: string): Promise<Answer>;
}

export function client(url: string, token: string | undefined): Client {
  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const h: Record<string, string> = { ...headers };
    if (token !== undefined) h.authorization = `Bearer ${token}`;
    if (body !== undefined) h['content-type'] = 'application/json';
    const res = await fetch(url + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };
  return {
    request,
    get: (p) => request('GET', p),
    put: (p, b) => request('PUT', p, b),
    post: (p, b) => request('POST', p, b),
    del: (p) => request('DELETE', p),
  };
}

export const TAG = 'generic.0.CONVKER5';
export const SYNC = '/api/v1/sources/acme/inbox/sync-raw-emails';
export const PREDICT = (version: string | number = 'live'): string =>
  `/api/v1/datasets/acme/triage/labellers/${version}/predict-raw-emails`;

/** Creates source acme/inbox (and dataset acme/triage when asked). */
export async function setup(c: Client, options: { dataset?: boolean; hasSentiment?: boolean } = {}): Promise<void> {
  const s = await c.put('/api/v1/sources/acme/inbox', { source: { title: 'Inbox' } });
  if (s.status !== 200) throw new Error(`source create failed: ${s.text}`);
  if (options.dataset === true) {
    const d = await c.put('/api/v1/datasets/acme/triage', {
      dataset: { source_ids: [s.json.source.id], has_sentiment: options.hasSentiment ?? true },
    });
    if (d.status !== 200) throw new Error(`dataset create failed: ${d.text}`);
  }
}
