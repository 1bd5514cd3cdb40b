/**
 * Shared by the delivery tests: synthetic documents, and the emulator's admin endpoints.
 */
import type { FaultRule } from '../../src/emulator/types.js';
import type { RawEmailDocument } from '../../src/model/index.js';

export const TAG = 'generic.0.CONVKER5';

/** A small valid document; the comment id is the hex of its Message-ID, as mailgate derives it. */
export function makeDoc(n: number, opts: { body?: string; props?: Record<string, string | number>; run?: string } = {}): RawEmailDocument {
  const messageId = `<msg-${opts.run ?? 'r'}-${n}@example.com>`;
  const headers = [
    `Message-ID: ${messageId}`,
    `From: Customer ${n} <customer${n}@example.com>`,
    'To: support@example.org',
    `Subject: Order ${n}`,
    'Date: Mon, 02 Mar 2026 10:00:00 +0000',
  ].join('\r\n');
  return {
    raw_email: { headers: { raw: headers }, body: { plain: opts.body ?? `Hello, this is message ${n}. Where is my order?` } },
    comment_id: Buffer.from(messageId.slice(1, -1), 'utf8').toString('hex'),
    ...(opts.props === undefined ? {} : { user_properties: opts.props }),
  };
}

/** A document the API refuses (400): its plain body exceeds 65536 characters. */
export function poisonDoc(n: number): RawEmailDocument {
  return makeDoc(n, { body: 'x'.repeat(70_000) });
}

export function items(docs: RawEmailDocument[], prefix = 'k'): Array<{ key: string; document: RawEmailDocument }> {
  return docs.map((document, i) => ({ key: `${prefix}${i}`, document }));
}

export interface Stats {
  requests: Record<string, Record<string, number>>;
  ai_units: number;
  comments: number;
}

export function admin(url: string) {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${url}/_emulator/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`emulator admin ${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return {
    stats: async (): Promise<Stats> => (await call('GET', 'stats')) as Stats,
    faults: async (rules: FaultRule[]): Promise<void> => void (await call('POST', 'faults', { rules })),
    clearFaults: async (): Promise<void> => void (await call('DELETE', 'faults')),
    reset: async (): Promise<void> => void (await call('POST', 'reset')),
  };
}

/** Requests the emulator answered for an endpoint, all statuses (and drops) together. */
export function requestsTo(stats: Stats, endpoint: string): number {
  return Object.values(stats.requests[endpoint] ?? {}).reduce((a, b) => a + b, 0);
}

export async function api(
  url: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}
