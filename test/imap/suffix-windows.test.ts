/**
 * Stubbed messages of different sizes share the partial FETCH of their last bytes (fetcher.ts
 * suffixWindows): fewer commands than messages, and every message assembled exactly as when it
 * is fetched alone (its own window, the suffix it needs and nothing more).
 */
import type { ImapFlow } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchChunk, type FetchedMessage } from '../../adapters/imap/fetcher.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { attachmentMessage } from './messages.js';
import { newUser } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

/** Counts the suffix FETCHes (a partial source from past the first bytes) the client sends. */
function countSuffixFetches(client: ImapFlow): { count: number } {
  const counter = { count: 0 };
  const fetchAll = client.fetchAll.bind(client);
  client.fetchAll = (range, query, options) => {
    const source = query.source;
    if (typeof source === 'object' && (source.start ?? 0) > 0) counter.count++;
    return fetchAll(range, query, options);
  };
  return counter;
}

async function all(client: ImapFlow, uids: number[]): Promise<FetchedMessage[]> {
  const out: FetchedMessage[] = [];
  for await (const slice of fetchChunk(client, 'INBOX', uids, 32 * 2 ** 20)) out.push(...slice.messages);
  return out;
}

describe('suffix windows', () => {
  it('reads the last bytes of stubbed messages of different sizes in fewer FETCHes, each message as fetched alone', async () => {
    const { user } = await newUser(server);
    // Sizes 40,000 … 40,900 bytes of attachment apart by 100, and one far larger: two windows.
    const sizes = [...Array.from({ length: 10 }, (_, i) => 40_000 + i * 100), 400_000];
    await server.append(
      user,
      'INBOX',
      sizes.map((bytes, i) => attachmentMessage(i + 1, [{ bytes, name: `a-${i}.pdf` }])),
    );
    await server.withClient(user, async (client) => {
      await client.mailboxOpen('INBOX', { readOnly: true });
      const uids = (await client.search({ all: true }, { uid: true })) as number[];
      const counter = countSuffixFetches(client);
      const together = await all(client, uids);
      expect(counter.count).toBe(2);
      expect(together.map((m) => m.stubbed)).toEqual(sizes.map(() => true));
      counter.count = 0;
      for (const [i, uid] of uids.entries()) {
        const [alone] = await all(client, [uid]);
        expect(alone!.raw.equals(together[i]!.raw), `UID ${uid}`).toBe(true);
      }
      expect(counter.count).toBe(sizes.length);
    });
  });
});
