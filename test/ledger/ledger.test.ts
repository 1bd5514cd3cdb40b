import { describe, expect, it } from 'vitest';
import {
  LEGACY_HASH_PREFIX,
  MemoryLedger,
  canonicalJson,
  docHashOf,
  documentHashes,
  documentJsonAndHash,
  estimatedUnits,
  ledgerVerdict,
  textHashOf,
  type LedgerEntry,
} from '../../src/ledger/index.js';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildComment } from '../../src/preview/comment.js';
import { previewSync } from '../../src/preview/index.js';
import type { RawEmailDocument } from '../../src/model/index.js';

const doc: RawEmailDocument = {
  raw_email: {
    headers: { raw: 'Subject: a' },
    body: { plain: 'text' },
    attachments: [{ name: 'a.pdf', size: 3, content_type: 'application/pdf' }],
  },
  comment_id: 'abc',
  user_properties: { 'string:B': 'b', 'string:A': 'a' },
};

describe('documentHashes', () => {
  it('is sha256 hex, stable under key order', () => {
    const reordered: RawEmailDocument = {
      user_properties: { 'string:A': 'a', 'string:B': 'b' },
      comment_id: 'abc',
      raw_email: { attachments: doc.raw_email.attachments, body: { plain: 'text' }, headers: { raw: 'Subject: a' } },
    };
    const h = documentHashes(doc);
    expect(h.textHash).toMatch(/^[0-9a-f]{64}$/);
    expect(h.docHash).toMatch(/^[0-9a-f]{64}$/);
    expect(documentHashes(reordered)).toEqual(h);
  });
  it('the text hash follows the comment text only; the document hash follows everything but the comment id', () => {
    const h = documentHashes(doc);
    const props = documentHashes({ ...doc, user_properties: { 'string:A': 'z' } });
    const text = documentHashes({ ...doc, raw_email: { ...doc.raw_email, body: { plain: 'other' } } });
    // A header the comment does not show (a second mailbox's Delivered-To) changes the document only.
    const header = documentHashes({ ...doc, raw_email: { ...doc.raw_email, headers: { raw: 'Subject: a\nDelivered-To: b@example.com' } } });
    const subject = documentHashes({ ...doc, raw_email: { ...doc.raw_email, headers: { raw: 'Subject: b' } } });
    expect(props.textHash).toBe(h.textHash);
    expect(props.docHash).not.toBe(h.docHash);
    expect(text.textHash).not.toBe(h.textHash);
    expect(text.docHash).not.toBe(h.docHash);
    expect(header.textHash).toBe(h.textHash);
    expect(header.docHash).not.toBe(h.docHash);
    expect(subject.textHash).not.toBe(h.textHash);
    expect(documentHashes({ ...doc, comment_id: 'def' })).toEqual(h);
  });
  it('textHashOf hashes the messages of the comment the preview builds; absent and empty properties hash alike', () => {
    expect(documentHashes(doc).textHash).toBe(textHashOf(buildComment(doc).comment.messages));
    const { user_properties: _, ...bare } = doc;
    expect(docHashOf(bare)).toBe(docHashOf({ ...doc, user_properties: {} }));
  });
  it('canonicalJson sorts keys at every level', () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[{"c":2,"d":1}]}');
  });
  it('keeps the text and hashes stored ledgers were written with (keys by UTF-16 code unit, undefined left out or null)', () => {
    const value = {
      z: 1,
      '\ufb00': [undefined, { b: undefined }, {}],
      '\u{1f600}': 'x',
      '\u00e9': null,
      a: { d: [1, 'two', true], c: 'quote " and \\ and \u2028' },
      n: -0.5,
    };
    expect(canonicalJson(value)).toBe(
      '{"a":{"c":"quote \\" and \\\\ and \u2028","d":[1,"two",true]},"n":-0.5,"z":1,"\u00e9":null,"\u{1f600}":"x","\ufb00":[null,{},{}]}',
    );
    const stored: RawEmailDocument = {
      raw_email: {
        headers: { raw: 'From: a@example.com\nSubject: Hi' },
        body: { plain: 'Hello\nthere' },
        attachments: [{ name: 'a.pdf', size: 3, content_type: 'application/pdf' }],
      },
      comment_id: 'abc',
      user_properties: { 'string:Mailbox': 'in', 'number:Score': 2 },
    };
    expect(docHashOf(stored)).toBe('6eaf9bdc0dec36f095783523ff36b200775ed4c72f882c9c125625d402388f6c');
    const messages = [
      {
        body: { text: 'Hello' },
        subject: { text: 'Hi' },
        from: 'a@example.com',
        to: ['b@example.com'],
        sent_at: '2024-03-04T09:00:00.000Z',
      },
    ];
    expect(textHashOf(messages)).toBe('83354521592fdaa6285f3a8a40c0058efe732dcc2107e350d084e7e41b776d78');
  });
});

describe('documentJsonAndHash', () => {
  const plain = (d: RawEmailDocument) => ({ json: JSON.stringify(d), docHash: docHashOf(d) });
  const corpus = ['mime', 'quotes'].flatMap((folder) => {
    const dir = fileURLToPath(new URL(`../../samples/${folder}/`, import.meta.url));
    return readdirSync(dir)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => readFileSync(`${dir}${f}`));
  });

  it('writes exactly JSON.stringify and docHashOf for every document of the sample corpus, in every mode', () => {
    expect(corpus.length).toBeGreaterThan(20);
    for (const raw of corpus)
      for (const headers of ['raw', 'parsed'] as const)
        for (const body of ['auto', 'plain', 'html'] as const)
          for (const userProperties of [undefined, { 'string:Mailbox': 'in\u2028"box"', 'number:Score': -0.5 }]) {
            const { document } = previewSync(raw, { headers, body, ...(userProperties && { userProperties }) });
            expect(documentJsonAndHash(document)).toEqual(plain(document));
          }
  });

  it('writes other shapes the plain way', () => {
    const shapes: RawEmailDocument[] = [
      doc,
      { ...doc, user_properties: undefined },
      { raw_email: { body: doc.raw_email.body, headers: doc.raw_email.headers, attachments: [] }, comment_id: 'abc' },
      { raw_email: { headers: { parsed: { Subject: 'a', From: 'b' } }, body: { plain: 'x' }, attachments: [] }, comment_id: 'abc' },
      {
        raw_email: { headers: { raw: 'Subject: a' }, body: { plain: 'x', html: '<p>x</p>' } as never, attachments: [] },
        comment_id: 'abc',
      },
      { raw_email: { headers: { raw: 'Subject: a' }, body: { plain: 'x' } }, comment_id: 'abc' } as RawEmailDocument,
      { user_properties: {}, raw_email: { headers: { raw: 'a' }, body: { html: '\u0000"\\' }, attachments: [] }, comment_id: 'abc' },
    ];
    for (const d of shapes) expect(documentJsonAndHash(d)).toEqual(plain(d));
  });
});

describe('textHashOf', () => {
  const general = (messages: unknown[]) => createHash('sha256').update(canonicalJson(messages)).digest('hex');
  const corpus = ['mime', 'quotes'].flatMap((folder) => {
    const dir = fileURLToPath(new URL(`../../samples/${folder}/`, import.meta.url));
    return readdirSync(dir)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => readFileSync(`${dir}${f}`));
  });

  it('is the SHA-256 of canonicalJson for every comment of the sample corpus, after its document was written or not', () => {
    expect(corpus.length).toBeGreaterThan(20);
    for (const raw of corpus)
      for (const body of ['auto', 'plain', 'html'] as const) {
        const { document, comment } = previewSync(raw, { body });
        expect(textHashOf(comment.messages)).toBe(general(comment.messages));
        documentJsonAndHash(document);
        expect(textHashOf(comment.messages)).toBe(general(comment.messages));
      }
  });

  it('hashes messages of any other shape as canonicalJson writes them (unknown, translated, absent and undefined members)', () => {
    const text = 'same text\n"quoted"';
    documentJsonAndHash({ raw_email: { headers: { raw: 'a' }, body: { plain: text }, attachments: [] }, comment_id: 'abc' });
    const shapes: unknown[][] = [
      [],
      [{ body: { text } }],
      [{ body: { text: 'other' } }, { body: { text } }],
      [{ to: ['b'], body: { text, translated_from: 'fr' }, language: 'en', subject: { text: 's' }, sent_at: undefined }],
      [{ body: { text }, zz: 1, aa: [undefined] }],
      [{ body: { words: text } }, { body: 'plain string' }, null, undefined],
      [Object.assign(Object.create(null) as object, { body: { text } })],
      [{ signature: { text: 'sig' }, cc: ['c'], bcc: ['d'], from: 'a', body: { text } }],
    ];
    for (const messages of shapes) expect(textHashOf(messages as never)).toBe(general(messages));
  });
});

describe('ledger rule', () => {
  const h = documentHashes(doc);
  const entry = (over: Partial<LedgerEntry>): LedgerEntry => ({ ...h, outcome: 'delivered', updatedAt: '2026-01-01T00:00:00Z', ...over });
  it.each([
    ['no entry', undefined, 'new', 1],
    ['identical delivered', entry({}), 'unchanged', 0],
    ['same text, other document', entry({ docHash: 'x' }), 'properties-only', 0],
    ['text differs', entry({ textHash: 'x', docHash: 'y' }), 'text-changed', 1],
    ['identical but rejected last time', entry({ outcome: 'rejected' }), 'new', 1],
    ['written before text hashes covered the comment', entry({ textHash: `${LEGACY_HASH_PREFIX}${h.textHash}` }), 'properties-only', 0],
  ] as const)('%s -> %s, %d unit(s)', (_name, e, verdict, units) => {
    expect(ledgerVerdict(h, e)).toBe(verdict);
    expect(estimatedUnits(ledgerVerdict(h, e))).toBe(units);
  });
});

describe('MemoryLedger', () => {
  it('looks up per source and returns only known ids', async () => {
    const ledger = new MemoryLedger();
    await ledger.record('p/s', [{ commentId: 'a1', textHash: 't', docHash: 'p', outcome: 'delivered', updatedAt: 'now' }]);
    expect([...(await ledger.lookup('p/s', ['a1', 'b2'])).keys()]).toEqual(['a1']);
    expect((await ledger.lookup('p/other', ['a1'])).size).toBe(0);
    await ledger.record('p/s', [{ commentId: 'a1', textHash: 't2', docHash: 'p', outcome: 'delivered', updatedAt: 'later' }]);
    expect((await ledger.lookup('p/s', ['a1'])).get('a1')?.textHash).toBe('t2');
    expect(ledger.size('p/s')).toBe(1);
  });
});
