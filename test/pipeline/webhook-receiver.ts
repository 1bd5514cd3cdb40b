/** A real local HTTP server (port 0) standing in for a prediction webhook: records every POST. */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  /** The status answered. */
  status: number;
  body: Buffer;
  signature: string | undefined;
  contentType: string | undefined;
}

export interface Receiver {
  url: string;
  posts: ReceivedPost[];
  /** Bodies of the POSTs answered 2xx, parsed. */
  accepted(): Array<{ route: string; predictions: Array<{ id: number; comment_id: string }> }>;
  close(): Promise<void>;
}

/** `answer(n)` gives the status of the n-th POST (from 0); default 200. */
export async function startReceiver(answer: (n: number) => number = () => 200, headers: Record<string, string> = {}): Promise<Receiver> {
  const posts: ReceivedPost[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const status = answer(posts.length);
      const sig = req.headers['x-mailgate-signature'];
      posts.push({
        status,
        body: Buffer.concat(chunks),
        signature: typeof sig === 'string' ? sig : undefined,
        contentType: req.headers['content-type'],
      });
      res.writeHead(status, { 'content-type': 'application/json', ...(status === 200 ? {} : headers) });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    posts,
    accepted: () => posts.filter((p) => p.status >= 200 && p.status < 300).map((p) => JSON.parse(p.body.toString('utf8')) as never),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * What a receiver does (docs/predictions.md): parse `t=<unix>,v1=<hex>`, recompute the HMAC of
 * "<t>.<exact body bytes>", compare in constant time, refuse a timestamp off by more than 5 minutes.
 */
export function verifySignature(secret: string, body: Buffer, header: string | undefined, nowMs = Date.now()): boolean {
  const m = header === undefined ? null : /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return false;
  const t = Number(m[1]);
  if (Math.abs(nowMs / 1000 - t) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'));
}
