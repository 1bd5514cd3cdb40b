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
const { itemDetail } = await import('../../src/service/console-item.js');

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

describe('console item view (main-thread re-parse)', () => {
  it('shows headers, MIME tree and attachments of a kept message without running the parser', async () => {
    const { document } = buildDocument(parseMessage(RAW));
    const item = {
      id: 7,
      route: 'in',
      key: 'k',
      commentId: 'c',
      status: 'queued',
      attempts: 0,
      origin: { adapter: 'upload' },
      document,
      warnings: [],
    };
    const store = {
      getItem: async () => item,
      listItems: async () => [{ id: 7, route: 'in', state: 'queued', attempts: 0, origin: { adapter: 'upload' }, commentId: 'c' }],
      itemRaw: async () => ({ raw: RAW }),
      itemAttempts: async () => [],
      threadMembers: async () => new Map(),
      itemsByComment: async () => new Map(),
      listPredictions: async () => [],
    };
    parses.count = 0;
    const detail = await itemDetail(store as never, new Map(), 7);
    expect(parses.count).toBe(0);
    expect(detail!.raw.attachments).toEqual([{ name: 'contract.pdf', content_type: 'application/pdf', size: expect.any(Number) }]);
    expect(detail!.raw.parts?.children?.map((p) => p.content_type)).toEqual(['text/html', 'application/pdf']);
    expect(detail!.raw.headers.find((h) => h.name === 'Subject')?.value).toBe('entities');
  });
});
