import { describe, expect, it } from 'vitest';
import { ImapFlow } from 'imapflow';
import { startDovecot } from '../support/dovecot.js';
import { textMessage } from './messages.js';
import { eventually } from './memory-sink.js';

describe('the Dovecot test harness', () => {
  it('starts, fills, kicks, restarts, recreates folders and cleans up', async () => {
    const d = await startDovecot();
    try {
      await d.addUser('alice', 'secret');
      expect(await d.append('alice', 'INBOX', [textMessage(1)])).toEqual([1]);
      d.fillMaildir(
        'alice',
        'Bulk',
        Array.from({ length: 50 }, (_, i) => textMessage(i)),
      );
      const st = await d.withClient('alice', (c) => c.status('Bulk', { messages: true, uidValidity: true }));
      expect(st && st.messages).toBe(50);

      const live = new ImapFlow({ host: d.host, port: d.port, secure: false, auth: { user: 'alice', pass: 'secret' }, logger: false });
      live.on('error', () => undefined);
      await live.connect();
      expect(await d.connections()).toEqual(new Map([['alice', 1]]));
      // A local delivery reaches an idling session without a connection of its own.
      await live.mailboxOpen('INBOX');
      const told = new Promise((resolve) => live.once('exists', resolve));
      void live.idle().catch(() => undefined);
      await d.deliver('alice', 'INBOX', textMessage(2));
      expect(await told).toMatchObject({ count: 2 });
      expect(await d.connections()).toEqual(new Map([['alice', 1]]));
      await d.kick('alice');
      await eventually(() => !live.usable);

      await d.restart();
      const st2 = await d.withClient('alice', (c) => c.status('INBOX', { messages: true }));
      expect(st2 && st2.messages).toBe(2);
      expect(await d.recreateFolder('alice', 'Bulk')).not.toBe(Number(st && st.uidValidity));
    } finally {
      await d.stop();
    }
  });
});
