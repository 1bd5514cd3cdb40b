import { describe, it, expect } from 'vitest';
import { startDovecot } from '../support/dovecot.js';

describe('dovecot harness', () => {
  it('starts, fills, restarts, kicks and recreates folders', async () => {
    const d = await startDovecot();
    try {
      await d.addUser('alice', 'secret');
      const uids = await d.append('alice', 'INBOX', ['Subject: hi\r\n\r\nhello\r\n']);
      expect(uids).toEqual([1]);
      d.fillMaildir('alice', 'Bulk', Array.from({ length: 5 }, (_, i) => `Subject: m${i}\r\nMessage-ID: <${i}@x>\r\n\r\nbody ${i}\r\n`));
      const st = await d.withClient('alice', async (c) => c.status('Bulk', { messages: true, uidValidity: true }));
      expect(st && st.messages).toBe(5);
      await d.kick('alice');
      await d.restart();
      const st2 = await d.withClient('alice', async (c) => c.status('INBOX', { messages: true }));
      expect(st2 && st2.messages).toBe(1);
      const v = await d.recreateFolder('alice', 'Bulk');
      expect(v).not.toBe(Number(st && st.uidValidity));
    } catch (e) {
      console.log(d.log());
      throw e;
    } finally {
      await d.stop();
    }
  });
});
