/**
 * The narrow reading of the first FETCH (adapters/imap/first-bytes.ts) against Dovecot: the same
 * answers as imapflow's own reading, message by message, and only the shapes it knows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchFirstBytes, fetchSourceRange, firstBytesDirect, firstBytesRead, readFirstBytes } from '../../adapters/imap/first-bytes.js';
import { startDovecot, type DovecotServer } from '../support/dovecot.js';
import { attachmentMessage, textMessage } from './messages.js';
import { newUser } from './setup.js';

let server: DovecotServer;
beforeAll(async () => {
  server = await startDovecot();
});
afterAll(async () => {
  await server?.stop();
});

const eightBit = Buffer.concat([
  Buffer.from('From: a@example.com\r\nSubject: =?utf-8?q?caf=C3=A9?=\r\nContent-Type: text/plain; charset=latin1\r\n\r\n'),
  Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a, 0x29, 0x20, 0x7b, 0x33, 0x7d, 0x0d, 0x0a]), // "café\r\n) {3}\r\n"
]);

describe('the first FETCH on the narrow path', () => {
  it('answers exactly as imapflow reads the same FETCH, for small, partial and 8-bit messages', async () => {
    const { user } = await newUser(server);
    const messages = [textMessage(1), attachmentMessage(2, [{ bytes: 40_000, name: 'a.bin' }]), eightBit, textMessage(4)];
    await server.append(user, 'INBOX', messages);
    await server.withClient(user, async (client) => {
      await client.mailboxOpen('INBOX', { readOnly: true });
      const before = firstBytesRead(client);
      const direct = firstBytesDirect(client);
      const narrow = await fetchFirstBytes(client, '1:*', 8192);
      expect(firstBytesRead(client) - before).toBe(4);
      // Each answer was read as the stream handed it over, past its queue and imapflow's reader.
      expect(firstBytesDirect(client) - direct).toBe(4);
      const generic = await client.fetchAll(
        '1:*',
        { uid: true, size: true, internalDate: true, source: { start: 0, maxLength: 8192 } },
        { uid: true },
      );
      const pick = (m: { uid: number; size?: number; internalDate?: Date | string; source?: Buffer }) => ({
        uid: m.uid,
        size: m.size,
        internalDate: m.internalDate,
        source: m.source,
      });
      expect(narrow.map(pick)).toEqual(generic.map(pick));
      expect(narrow[1]!.source!.length).toBe(8192);
      expect(narrow[2]!.source).toEqual(eightBit);

      // The last bytes of the large message, as fetchFromEnds asks for them.
      const start = narrow[1]!.size! - 2048;
      const mark = firstBytesRead(client);
      const tail = await fetchSourceRange(client, '2', start, 2048);
      expect(firstBytesRead(client) - mark).toBe(1);
      const whole = await client.fetchAll('2', { uid: true, source: { start, maxLength: 2048 } }, { uid: true });
      expect(tail.map(pick)).toEqual(whole.map(pick));
      expect(tail[0]!.source!.length).toBe(2048);
    });
  });

  it('leaves every other shape to imapflow', () => {
    const lit = [Buffer.from('abc')];
    const ok = '* 1 FETCH (UID 7 INTERNALDATE "25-Nov-2026 00:01:17 +0000" RFC822.SIZE 3 MODSEQ (2) BODY[]<0> {3}\r\n)';
    expect(readFirstBytes(Buffer.from(ok), lit)).toEqual({
      uid: 7,
      size: 3,
      internalDate: new Date('2026-11-25T00:01:17Z'),
      modseq: 2n,
      source: lit[0],
    });
    for (const line of [
      '* 1 FETCH (UID 7 FLAGS (\\Seen) RFC822.SIZE 3 BODY[]<0> {3}\r\n)', // an item it does not know
      '* 1 FETCH (UID 7 RFC822.SIZE 3 BODY[]<0> {4}\r\n)', // the literal is not the size announced
      '* 1 FETCH (UID 7 RFC822.SIZE 3 BODY[]<0> "abc")', // a quoted string instead of a literal
      '* 1 FETCH (RFC822.SIZE 3 BODY[]<0> {3}\r\n)', // no UID
      '* 1 FETCH (UID 7  RFC822.SIZE 3 BODY[]<0> {3}\r\n)', // two spaces
      '* 1 FETCH (UID 7 RFC822.SIZE 3 BODY[]<0> {3}\r\n BODY[]<0> {3}\r\n)', // two bodies
      '* 1 EXPUNGE',
    ]) {
      expect(readFirstBytes(Buffer.from(line), lit), line).toBeUndefined();
    }
    expect(readFirstBytes(Buffer.from(ok), [])).toBeUndefined();
    // A literal from another offset than the one asked for.
    expect(readFirstBytes(Buffer.from(ok), lit, 2048)).toBeUndefined();
    const tail = '* 1 FETCH (UID 7 BODY[]<2048> {3}\r\n)';
    expect(readFirstBytes(Buffer.from(tail), lit, 2048)).toEqual({ uid: 7, source: lit[0] });
    expect(readFirstBytes(Buffer.from(tail), lit)).toBeUndefined();
  });
});
