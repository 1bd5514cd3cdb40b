/**
 * Idempotency-Key answers kept in memory, bounded (oldest dropped first). Same key and same
 * content → the first answer again; same key, other content → a conflict. A key whose first
 * request is still running makes the second wait for it. Only success answers are kept: a
 * refused or failed upload may be retried under the same key. Across restarts the sink's
 * SHA-256 dedupe answers the same ids (marked duplicate).
 */
import { createHash } from 'node:crypto';
import type { PushResponse } from '../../src/pipeline/types.js';

interface Entry {
  fingerprint: string;
  answer: Promise<PushResponse>;
}

export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/**
 * What an upload holds, independent of how it was framed: a client retrying a multipart
 * upload sends the same files under a fresh boundary, which must not count as other content.
 */
export function fingerprint(messages: readonly { file?: string; index?: number; raw: Buffer; failure?: { code: string } }[]): string {
  const h = createHash('sha256');
  for (const m of messages) {
    h.update(JSON.stringify([m.file ?? null, m.index ?? null, m.failure?.code ?? null, m.raw.length]));
    h.update(m.raw);
  }
  return h.digest('hex');
}

export class IdempotencyCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity: number) {}

  /**
   * The answer for `key`: the remembered one, `conflict` when the key was used with other
   * content, or the one `run` produces (remembered when its status is 2xx).
   */
  async answer(key: string, print: string, run: () => Promise<PushResponse>): Promise<PushResponse | 'conflict'> {
    const known = this.entries.get(key);
    if (known) return known.fingerprint === print ? known.answer : 'conflict';
    if (this.capacity === 0) return run();
    const answer = run();
    this.entries.set(key, { fingerprint: print, answer });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    try {
      const res = await answer;
      if (res.status < 200 || res.status > 299) this.forget(key, answer);
      return res;
    } catch (err) {
      this.forget(key, answer);
      throw err;
    }
  }

  private forget(key: string, answer: Promise<PushResponse>): void {
    if (this.entries.get(key)?.answer === answer) this.entries.delete(key);
  }
}
