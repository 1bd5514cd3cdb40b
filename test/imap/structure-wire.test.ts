/**
 * BODYSTRUCTURE on the narrow path (adapters/imap/structure-wire.ts) against Dovecot: for every
 * MIME sample and a few awkward shapes, the fields a plan reads and the plan itself are those
 * of imapflow's own reading of the same FETCH; shapes it cannot read for certain go to imapflow.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { MessageStructureObject } from 'imapflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchBodyStructures, firstBytesRead } from '../../adapters/imap/first-bytes.js';
import { planMessage } from '../../adapters/imap/structure.js';
import { readStructure } from '../../adapters/imap/structure-wire.js';
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

const SAMPLES = new URL('../../samples/mime/', import.meta.url);

function multipart(boundaryParam: string, boundary: string, extra = ''): string {
  const b64 = 'QUJD'.repeat(19);
  return [
    'From: a@example.com',
    'Subject: shape',
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; ${boundaryParam}`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'hello',
    `--${boundary}`,
    `Content-Type: application/octet-stream; name="${extra}x.bin"`,
    'Content-Transfer-Encoding: base64',
    `Content-Disposition: attachment; filename="${extra}x.bin"`,
    '',
    ...Array.from({ length: 200 }, () => b64),
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

const forwarded = [
  'From: a@example.com',
  'Subject: forwarded',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="outer"',
  '',
  '--outer',
  'Content-Type: text/plain',
  '',
  'see below',
  '--outer',
  'Content-Type: message/rfc822',
  '',
  'From: b@example.com',
  'Subject: inner',
  'Content-Type: multipart/alternative; boundary="inner"',
  '',
  '--inner',
  'Content-Type: text/plain',
  '',
  'inner text',
  '--inner',
  'Content-Type: text/html',
  '',
  '<p>inner</p>',
  '--inner--',
  '--outer--',
  '',
].join('\r\n');

/** The fields planMessage reads, as a plain tree (below a message/* part it reads nothing). */
function planFields(node: MessageStructureObject): unknown {
  const inner = node.type.startsWith('message/') ? undefined : node.childNodes?.map(planFields);
  return {
    part: node.part,
    type: node.type,
    boundary: node.parameters?.['boundary'],
    encoding: node.encoding,
    size: node.size,
    disposition: node.disposition,
    children: inner,
  };
}

describe('BODYSTRUCTURE on the narrow path', () => {
  it('gives every plan exactly as imapflow reads the same FETCH', async () => {
    const { user } = await newUser(server);
    const samples = readdirSync(SAMPLES)
      .filter((f) => f.endsWith('.eml'))
      .sort()
      .map((f) => readFileSync(new URL(f, SAMPLES)));
    const shapes = [
      multipart('boundary="plain-b"', 'plain-b'),
      multipart('boundary*0="cont-"; boundary*1="b"', 'cont-b'),
      multipart('BOUNDARY=atom-b', 'atom-b', 'caf\u00e9-'),
      multipart('boundary="q\\"b"', 'q"b'),
      forwarded,
      attachmentMessage(1, [
        { bytes: 40_000, name: 'a.pdf' },
        { bytes: 20_000, name: 'b.bin' },
      ]),
    ].map((m) => Buffer.from(m));
    await server.append(user, 'INBOX', [...samples, ...shapes]);
    await server.withClient(user, async (client) => {
      await client.mailboxOpen('INBOX', { readOnly: true });
      const before = firstBytesRead(client);
      const narrow = await fetchBodyStructures(client, '1:*');
      const read = firstBytesRead(client) - before;
      const generic = await client.fetchAll('1:*', { uid: true, bodyStructure: true }, { uid: true });
      const byUid = new Map(narrow.map((m) => [m.uid, m.bodyStructure!]));
      expect(byUid.size).toBe(generic.length);
      for (const g of generic) {
        const n = byUid.get(g.uid)!;
        expect(planFields(n), `uid ${g.uid}`).toEqual(planFields(g.bodyStructure!));
        expect(planMessage(n), `uid ${g.uid}`).toEqual(planMessage(g.bodyStructure));
      }
      // Most answers were read narrowly; the continued boundary and the 8-bit filename were not.
      expect(read).toBeGreaterThan(generic.length / 2);
      expect(read).toBeLessThan(generic.length);
    });
  });

  it('leaves every shape it cannot read for certain to imapflow', () => {
    const part = '("TEXT" "PLAIN" ("CHARSET" "us-ascii") NIL NIL "7BIT" 5 1 NIL NIL NIL NIL)';
    const ok = `* 1 FETCH (UID 7 BODYSTRUCTURE (${part}${part} "MIXED" ("BOUNDARY" "b") NIL NIL NIL))`;
    expect(readStructure(Buffer.from(ok), [])).toMatchObject({
      uid: 7,
      bodyStructure: { type: 'multipart/mixed', parameters: { boundary: 'b' } },
    });
    for (const line of [
      ok.replace('"b"', '{1}'), // a literal
      ok.replace('"b"', '"=?utf-8?q?b?="'), // an encoded boundary
      ok.replace('"BOUNDARY"', '"BOUNDARY*0"'), // a continued boundary
      ok.replace('UID 7', 'UID 7 FLAGS (\\Seen)'), // another item
      ok.replace('UID 7 ', ''), // no UID
      ok.slice(0, -1), // unbalanced
      `${ok} `, // trailing bytes
      ok.replace('us-ascii', 'caf\u00e9'), // 8-bit
    ]) {
      expect(readStructure(Buffer.from(line, 'latin1'), []), line).toBeUndefined();
    }
    expect(readStructure(Buffer.from(ok), [Buffer.from('x')])).toBeUndefined();
  });
});
