/**
 * Regression: opening an item in the console (`GET /api/items/:id`) re-parsed the kept message
 * on the service's thread (a 10 MB HTML body of `&` blocked the server 2.5 s per view). The view
 * takes the attachment list the parse worker computed into the stored document and reads only
 * headers and the MIME structure of the raw bytes. Asserted on work done: parser runs per view.
 */
import { describe, expect, it, vi } from 'vitest';

const parses = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/mime/parse.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/mime/parse.js')>();
  return {
    ...real,
    parseMessage: (...args: Parameters<typeof real.parseMessage>) => {
      parses.count++;
      return real.parseMessage(...args);
    },
  };
});

const { buildDocument } = await import('../../src/document/index.js');
const { parseMessage } = await import('../../src/mime/parse.js');
const { itemDetail, MAX_VIEW_HTML_CHARS } = await import('../../src/service/console-item.js');

const RAW = Buffer.from(
  [
    'From: Ann <ann@example.com>',
    'To: support@example.com',
    'Subject: entities',
    'Message-ID: <entities@example.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary=b',
    '',
    '--b',
    'Content-Type: text/html',
    '',
    `<p>${'&amp;'.repeat(200_000)}</p>`,
    '--b',
    'Content-Type: application/pdf; name=contract.pdf',
    'Content-Disposition: attachment; filename=contract.pdf',
    '',
    'JVBERi0xLjQK',
    '--b--',
    '',
  ].join('\r\n'),
);

function storeOf(raw: Buffer) {
  const { document } = buildDocument(parseMessage(raw));
  const item = {
    id: 7,
    route: 'in',
    key: 'k',
    commentId: 'c',
    status: 'queued',
    attempts: 0,
    origin: { adapter: 'upload', instance: 'desk', id: 'sha256:0', details: {} },
    document,
    warnings: [],
  };
  const reads = { documents: 0, raw: 0 };
  return {
    reads,
    getItem: async () => (reads.documents++, item),
    itemState: async () => ({ id: 7, route: 'in', key: 'k', commentId: 'c', status: item.status, attempts: item.attempts, enqueuedAt: '' }),
    listItems: async () => [
      {
        id: 7,
        route: 'in',
        state: 'queued',
        attempts: 0,
        origin: { adapter: 'upload', instance: 'desk', id: 'sha256:0', details: {} },
        commentId: 'c',
      },
    ],
    itemRaw: async () => (reads.raw++, { raw }),
    itemAttempts: async () => [],
    threadMembers: async () => new Map(),
    itemsByComment: async () => new Map(),
    listPredictions: async () => [],
  };
}

describe('console item view (main-thread re-parse)', () => {
  it('answers with at most MAX_VIEW_HTML_CHARS of a 10 MB HTML body and says what it cut (whole-document serialization)', async () => {
    const html = `<p>${'&amp;'.repeat(2 * 1024 * 1024)}</p>`;
    const raw = Buffer.from(`From: a@example.com\r\nSubject: big\r\nContent-Type: text/html\r\n\r\n${html}\r\n`);
    const detail = await itemDetail(storeOf(raw) as never, new Map(), 7);
    expect(detail!.document_cut).toEqual({ field: 'raw_email.body.html', chars: html.length + 1, shown_chars: MAX_VIEW_HTML_CHARS });
    const body = (detail!.document as { raw_email: { body: { html: string } } }).raw_email.body.html;
    expect(body).toHaveLength(MAX_VIEW_HTML_CHARS);
    // The whole answer, as it is sent, is a small multiple of the cut, not of the body.
    expect(JSON.stringify(detail).length).toBeLessThan(4 * MAX_VIEW_HTML_CHARS);
    // Opened again in the same state: neither the document nor the bytes are read again.
    const store = storeOf(raw);
    const first = await itemDetail(store as never, new Map(), 7);
    expect(await itemDetail(store as never, new Map(), 7)).toEqual(first);
    expect(store.reads).toEqual({ documents: 1, raw: 1 });
    const small = await itemDetail(
      storeOf(Buffer.from('Subject: s\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n')) as never,
      new Map(),
      7,
    );
    expect(small!.document_cut).toBeNull();
  });

  it('shows headers, MIME tree and attachments of a kept message without running the parser', async () => {
    const store = storeOf(RAW);
    parses.count = 0;
    const detail = await itemDetail(store as never, new Map(), 7);
    expect(parses.count).toBe(0);
    expect(detail!.raw.attachments).toEqual([{ name: 'contract.pdf', content_type: 'application/pdf', size: expect.any(Number) }]);
    expect(detail!.raw.parts?.children?.map((p) => p.content_type)).toEqual(['text/html', 'application/pdf']);
    expect(detail!.raw.headers.find((h) => h.name === 'Subject')?.value).toBe('entities');
  });
});
