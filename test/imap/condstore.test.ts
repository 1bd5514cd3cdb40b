/**
 * CONDSTORE (Dovecot has it): the checkpoint records HIGHESTMODSEQ, and a pass over a folder
 * whose UIDVALIDITY, HIGHESTMODSEQ and UIDNEXT show nothing new issues no UID SEARCH. The
 * commands are counted by the proxy between the adapter and Dovecot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkpointKey } from '../../adapters/imap/index.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { MemorySink, eventually } from './memory-sink.js';
import { startProxy, type Proxy } from './proxy.js';
import { account, newUser, run } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

/** Commands sent since index `from`. */
const since = (proxy: Proxy, from: number): string[] => proxy.commands.slice(from);

describe('CONDSTORE', () => {
  it('records HIGHESTMODSEQ and skips the UID SEARCH of a folder in which nothing changed', async () => {
    const { user, pass } = await newUser(server);
    await server.append(user, 'INBOX', [textMessage(1), textMessage(2), textMessage(3)]);
    const proxy = await startProxy(server.port);
    const sink = new MemorySink();
    // Polling every second: each poll is a pass over INBOX.
    const r = run(
      [{ ...account(server, user, pass, { idle: false, poll_interval_ms: 1000, after_delivery: 'seen' }), port: proxy.port }],
      sink,
    );
    try {
      await eventually(() => sink.accepted.length === 3 && r.adapter.accountHealth()[0]!.state === 'idle');
      const key = checkpointKey(user, 'INBOX');
      const first = sink.checkpoints.get(key)!;
      expect(first).toMatchObject({ lastUid: 3, highestModseq: expect.stringMatching(/^[1-9]\d*$/) });

      let from = proxy.commands.length;
      await eventually(() => since(proxy, from).filter((c) => c === 'EXAMINE').length >= 2, 15_000, 'two polling passes');
      expect(since(proxy, from)).not.toContain('UID SEARCH');

      // Flags changed (HIGHESTMODSEQ rises): one pass searches and records the new value; then quiet again.
      await r.adapter.afterDelivery(sink.accepted.map((m) => m.origin));
      await eventually(
        () => sink.checkpoints.get(key)!['highestModseq'] !== first['highestModseq'],
        15_000,
        'the new HIGHESTMODSEQ recorded',
      );
      expect(sink.checkpoints.get(key)).toMatchObject({ uidValidity: first['uidValidity'], lastUid: 3 });
      from = proxy.commands.length;
      await eventually(() => since(proxy, from).filter((c) => c === 'EXAMINE').length >= 2, 15_000, 'two more polling passes');
      expect(since(proxy, from)).not.toContain('UID SEARCH');

      // New mail is still found: UIDNEXT moved, so the pass searches.
      from = proxy.commands.length;
      await server.append(user, 'INBOX', [textMessage(4, 'after the quiet passes')]);
      await eventually(() => sink.accepted.length === 4, 15_000, 'the new message');
      expect(since(proxy, from)).toContain('UID SEARCH');
      expect(sink.subjects()[3]).toBe('after the quiet passes');
    } finally {
      await r.stop();
      await proxy.close();
    }
  });
});
