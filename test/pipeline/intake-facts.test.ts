/**
 * Regression: the store parsed every message's headers again (addresses, encoded words,
 * Message-IDs) on the main thread inside the enqueue transaction, undoing intake's lazy
 * document. Intake now hands over the facts its parse computed; the store only writes them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake } from '../../src/pipeline/intake.js';
import { preview } from '../../src/preview/index.js';
import { openStore, type OutboxInput, type Store } from '../../src/store/index.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const route = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/pipe' }] }).routes[0]!;
const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

const raw = (n: number): Buffer =>
  Buffer.from(
    `From: =?UTF-8?Q?J=C3=B6rg?= <joerg${n}@example.com>\r\nSubject: =?UTF-8?B?UsOpc3Vtw6k=?= ${n}\r\n` +
      `Message-ID: <id-${n}@example.org>\r\nDate: Tue, 03 Mar 2026 10:15:00 +0000\r\n\r\nbody ${n}\r\n`,
  );

describe('intake facts', () => {
  it('stores the facts the parse computed and never parses the document on the main thread', async () => {
    const store = await openStore('sqlite::memory:');
    stores.push(store);
    const handed: OutboxInput[] = [];
    const enqueue = store.enqueue.bind(store);
    store.enqueue = (items, ...rest) => {
      handed.push(...items);
      return enqueue(items, ...rest);
    };
    const intake = createIntake({
      store,
      routes: new Map([['r', route]]),
      parse: async (bytes, o) => encodePreview(await preview(bytes, o)),
      parsing: {},
      maxOutbox: 100,
    });
    await intake.accept(
      [1, 2].map((n) => ({
        raw: raw(n),
        key: `files:/m:${n}`,
        origin: fileOrigin('/m', n),
        route: 'r',
        receivedAt: new Date(),
      })),
    );
    expect(handed).toHaveLength(2);
    for (const input of handed) {
      expect(input.facts).toMatchObject({ sender: expect.stringMatching(/^joerg\d@example\.com$/), senderName: 'Jörg' });
      // The lazy document was never parsed back from its JSON text.
      expect(Reflect.get(input, 'parsed')).toBeUndefined();
    }
    const items = await store.listItems({ limit: 10, q: 'résumé' });
    expect(items.map((i) => [i.sender, i.subject, i.messageId])).toEqual([
      ['joerg2@example.com', 'Résumé 2', 'id-2@example.org'],
      ['joerg1@example.com', 'Résumé 1', 'id-1@example.org'],
    ]);
  });
});
