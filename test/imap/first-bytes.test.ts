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

  it('reads every line as the regular expressions of its shape would, byte for byte', () => {
    // The shape as regular expressions (how this reader was first written): the reference.
    const LINE = /^\* \d{1,10} FETCH \((.*)\)$/s;
    const ITEM =
      /(UID|RFC822\.SIZE) (\d{1,10})|INTERNALDATE "([^"\\\r\n]*)"|MODSEQ \((\d{1,20})\)|BODY\[\]<(\d{1,10})> \{(\d{1,10})\}\r\n/y;
    const reference = (payload: Buffer, literals: Buffer[], start: number) => {
      if (payload.length > 512 || literals.length !== 1) return undefined;
      const line = LINE.exec(payload.toString('latin1'));
      if (line === null) return undefined;
      const items = line[1]!;
      const out: Record<string, unknown> = {};
      let pos = 0;
      while (pos < items.length) {
        ITEM.lastIndex = pos;
        const m = ITEM.exec(items);
        if (m === null) return undefined;
        if (m[1] === 'UID') out['uid'] = Number(m[2]);
        else if (m[1] !== undefined) out['size'] = Number(m[2]);
        else if (m[3] !== undefined) {
          const d = new Date(m[3]);
          out['internalDate'] = Number.isNaN(d.getTime()) ? m[3] : d;
        } else if (m[4] !== undefined) out['modseq'] = BigInt(m[4]);
        else {
          if (out['source'] !== undefined || Number(m[5]) !== start || literals[0]!.length !== Number(m[6])) return undefined;
          out['source'] = literals[0]!;
        }
        pos = ITEM.lastIndex;
        if (pos < items.length && m[6] === undefined) {
          if (items[pos] !== ' ') return undefined;
          pos++;
        }
      }
      if (out['uid'] === undefined || (out['uid'] as number) < 1 || out['source'] === undefined) return undefined;
      return out;
    };
    let seed = 28;
    // mulberry32: a small deterministic generator.
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
      return ((r ^ (r >>> 14)) >>> 0) % n;
    };
    const pick = <T>(xs: readonly T[]): T => xs[random(xs.length)]!;
    const good = [
      'UID 7',
      'UID 4294967295',
      'RFC822.SIZE 3',
      'INTERNALDATE "25-Nov-2026 00:01:17 +0000"',
      'INTERNALDATE "not a date"',
      'MODSEQ (2)',
      'MODSEQ (12345678901234567890)',
    ];
    const bad = [
      'UID 0',
      'UID 12345678901',
      'RFC822.SIZE ',
      'INTERNALDATE "a\\b"',
      'INTERNALDATE "open',
      'MODSEQ (123456789012345678901)',
      'MODSEQ 2',
      'BODY[]<0> {4}\r\n',
      'BODY[]<0> {3}',
      'BODY[]<0> {3}\r\n',
      'FLAGS (\\Seen)',
      'uid 7',
    ];
    const literals = [Buffer.from('abc')];
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      const list = Array.from({ length: random(4) }, () => pick(random(6) === 0 ? bad : good));
      if (random(10) < 7) list.splice(random(list.length + 1), 0, 'UID 7');
      if (random(10) < 7) list.splice(random(list.length + 1), 0, pick(['BODY[]<0> {3}\r\n', 'BODY[]<2048> {3}\r\n']));
      // One space between items, none after a literal's line break; sometimes another separator.
      const joined = list.map(
        (item, i) => (i === 0 ? '' : random(10) === 0 ? pick(['', '  ', ' ']) : list[i - 1]!.endsWith('\n') ? '' : ' ') + item,
      );
      const head = random(10) === 0 ? pick(['* 12345678901 FETCH (', '* 1 FETCH(', '* 1 fetch (']) : '* 1 FETCH (';
      let text = `${head}${joined.join('')}${random(10) === 0 ? pick([') ', '', '))']) : ')'}`;
      // Some lines damaged further: a byte dropped, doubled or replaced by one of the shape's own.
      if (random(4) === 0) {
        const at = random(text.length);
        const op = random(3);
        const c = pick([' ', '(', ')', '"', '\\', '\r', '\n', '{', '}', '0', '9', 'U', '<', '>', '\u00e9']);
        text =
          op === 0
            ? text.slice(0, at) + text.slice(at + 1)
            : op === 1
              ? text.slice(0, at) + text[at] + text.slice(at)
              : text.slice(0, at) + c + text.slice(at + 1);
      }
      const payload = Buffer.from(text, 'latin1');
      const start = pick([0, 2048]);
      const want = reference(payload, literals, start);
      if (want !== undefined) accepted++;
      expect(readFirstBytes(payload, literals, start), JSON.stringify(text)).toEqual(want);
    }
    // The lines cover both outcomes.
    expect(accepted).toBeGreaterThan(500);
    expect(accepted).toBeLessThan(19_000);
  });
});
