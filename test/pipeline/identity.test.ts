/**
 * Identity belongs to the adapter, and stores written before keep deduplicating: the keys the
 * kinds build now are the strings the store has held their messages under from the start
 * (`imap:<account>:<folder>:<uidvalidity>:<uid>`, `files:<path>:<index>`, `sha256:<hex>`,
 * `graph:<instance>:<id>:0`, each `|<target>`), so an item stored in that format is found as a
 * duplicate and not stored again.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { fileKey, fileOrigin } from '../../adapters/files/identity.js';
import { gmailKey } from '../../adapters/gmail/sync.js';
import { graphKey } from '../../adapters/graph/sync.js';
import { imapKey, imapOrigin } from '../../adapters/imap/identity.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake } from '../../src/pipeline/intake.js';
import { contentKey } from '../../src/pipeline/origin.js';
import type { Inbound } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { OutboxInput, Store } from '../../src/store/types.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/support' }] });
const routes = new Map(config.routes.map((r) => [r.name, r]));
const raw = Buffer.from('Subject: kept\r\n\r\nbody\r\n');
const sha = `sha256:${createHash('sha256').update(raw).digest('hex')}`;

/** An item as an earlier version stored it: its key string and its origin. */
function stored(key: string, origin: Record<string, unknown>): OutboxInput {
  return {
    route: 'r',
    key: `${key}|acme/support`,
    commentId: key,
    document: { raw_email: { headers: { raw: 'Subject: kept' }, body: { plain: 'body' } } },
    origin: origin as never,
    raw,
  };
}

let store: Store | undefined;
afterEach(async () => store?.close());

describe('keys stored before', () => {
  it('finds items stored under the earlier key formats as duplicates (a pulled one not even parsed)', async () => {
    store = await openStore('sqlite::memory:');
    const before = await store.enqueue([
      stored('imap:support:INBOX:7:42', { adapter: 'imap', account: 'support', folder: 'INBOX', uidValidity: 7, uid: 42 }),
      stored('files:/archive/a.mbox:3', { adapter: 'files', path: '/archive/a.mbox', index: 3 }),
      stored('graph:m365/u@x:AAMk=:0', { adapter: 'graph', account: 'm365/u@x', eventId: 'AAMk=' }),
      stored(sha, { adapter: 'webhook:mailgun', account: 'in', pushed: true, eventId: 'ev-1' }),
    ]);
    let parsed = 0;
    const intake = createIntake({
      store,
      routes,
      parse: async (bytes, o) => ((parsed += 1), encodePreview(await preview(bytes, o))),
      parsing: {},
      maxOutbox: 100,
    });
    const at = new Date();
    const file = fileOrigin('/archive/a.mbox', 3);
    const graph = { adapter: 'graph', instance: 'm365/u@x', id: 'AAMk=', details: {} };
    const pulled: Inbound[] = [
      { raw, key: imapKey('support', 'INBOX', 7, 42), origin: imapOrigin('support', 'INBOX', 7, 42), route: 'r', receivedAt: at },
      { raw, key: fileKey(file), origin: file, route: 'r', receivedAt: at },
      { raw, key: graphKey('m365/u@x', 'AAMk='), origin: graph, route: 'r', receivedAt: at },
    ];
    const ids = before.items.map((o) => String(o.id));
    expect(await intake.accept(pulled)).toEqual([
      { id: ids[0], duplicate: true },
      { id: ids[1], duplicate: true },
      { id: ids[2], duplicate: true },
    ]);
    expect(parsed).toBe(0);
    const pushed: Inbound = {
      raw,
      key: contentKey(raw),
      origin: { adapter: 'webhook:mailgun', instance: 'in', id: contentKey(raw), details: {} },
      route: 'r',
      receivedAt: at,
    };
    expect(await intake.accept([pushed], { whenFull: 'refuse' })).toEqual([{ id: ids[3], duplicate: true }]);
    expect(await store.outboxDepth('r')).toBe(4);
  });

  it('builds the same key strings as the earlier versions did', () => {
    expect(imapKey('a', 'Sent Items', 1, 9)).toBe('imap:a:Sent Items:1:9');
    expect(fileKey(fileOrigin('/m/x.eml', 0))).toBe('files:/m/x.eml:0');
    expect(fileKey(fileOrigin('/v/x.mbox', 2, { account: 'u@x' }))).toBe('files:u@x:/v/x.mbox:2');
    expect(graphKey('m365/u@x', 'id1')).toBe('graph:m365/u@x:id1:0');
    expect(gmailKey('ws/u@x', 'id1')).toBe('gmail:ws/u@x:id1:0');
    expect(contentKey(raw)).toBe(sha);
  });
});
