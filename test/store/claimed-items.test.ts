/**
 * What a claim answers: on SQLite, the bodies the enqueuing connection kept instead of reading
 * them back, and the file's own text whenever anything else changed the item; on both stores,
 * items whose document, preview and origin are parsed on read, and `getItem` answering a plain
 * object.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { KeptBodies } from '../../src/store/sqlite/kept-bodies.js';
import type { OutboxInput, OutboxItem } from '../../src/store/types.js';
import { input } from '../contract/store.case.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';

const dir = mkdtempSync(join(tmpdir(), 'mailgate-claimed-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stopTestServer();
});
let n = 0;
const freshPath = (): string => join(dir, `store-${(n += 1)}.db`);

const preview = {
  id: 'c0de0001',
  timestamp: '2024-01-02T03:04:05Z',
  user_properties: {},
  messages: [{ body: { text: 'hello' }, from: 'a@example.com' }],
};
const hashes = { textHash: 'a'.repeat(64), docHash: 'b'.repeat(64) };

/** The plain body text of a claimed item's document. */
const bodyOf = (item: OutboxItem | undefined): string | undefined => {
  const body = item?.document.raw_email.body;
  return body !== undefined && 'plain' in body ? body.plain : undefined;
};

/** Input `n` with its document given as text (as the parse workers give it), a preview and hashes. */
function encodedInput(route: string, k: number, body: string): OutboxInput {
  const base = input(route, k);
  const document = { ...base.document, raw_email: { ...base.document.raw_email, body: { plain: body } } };
  return { ...base, document, json: { document: JSON.stringify(document), preview: JSON.stringify(preview) }, hashes };
}

describe('SQLite claims and the bodies their enqueue kept', () => {
  it('answer the text the enqueue wrote, as the file holds it', async () => {
    const path = freshPath();
    const a = await openStore(`sqlite:${path}`);
    const inputs = [encodedInput('r', 1, 'first'), input('r', 2, { preview })];
    await a.enqueue(inputs);
    const claimed = await a.claim('r', 10, 'a', 60_000);
    await a.close();
    // The same items read back from the file by another connection.
    const b = await openStore(`sqlite:${path}`);
    for (const item of claimed) {
      const stored = await b.getItem(item.id);
      expect(item.documentJson).toBe(stored?.documentJson);
      expect(item.document).toEqual(stored?.document);
      expect(item.preview).toEqual(stored?.preview);
      expect(item.hashes).toEqual(stored?.hashes);
    }
    expect(claimed[0]?.documentJson).toBe(inputs[0]?.json?.document);
    expect(claimed[0]?.hashes).toEqual(hashes);
    expect(claimed[1]?.hashes).toBeUndefined();
    await b.close();
  });

  it("answer the file's text once another connection has replaced an item this one enqueued", async () => {
    const path = freshPath();
    const a = await openStore(`sqlite:${path}`);
    const b = await openStore(`sqlite:${path}`);
    await a.enqueue([encodedInput('r', 1, 'original'), encodedInput('r', 2, 'untouched')]);
    // Another connection (a replica, `mailgate dlq replay`) claims the first, gives up on it and replays it changed.
    const [taken] = await b.claim('r', 1, 'b', 60_000);
    expect(await b.deadLetter(taken!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' })).toBe(true);
    await b.replayDeadLetter(taken!.id, encodedInput('r', 1, 'replaced'));
    const claimed = await a.claim('r', 10, 'a', 60_000);
    expect(claimed.map((i) => bodyOf(i))).toEqual(['replaced', 'untouched']);
    await a.close();
    await b.close();
  });

  it('answer the replacement of an item this connection dead-lettered unclaimed and replayed', async () => {
    const a = await openStore(`sqlite:${freshPath()}`);
    const [stored] = (await a.enqueue([encodedInput('r', 1, 'original')])).items;
    expect(await a.deadLetter(stored!.id, { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'no' })).toBe(true);
    await a.replayDeadLetter(stored!.id, encodedInput('r', 1, 'replaced'));
    const [claimed] = await a.claim('r', 10, 'a', 60_000);
    expect(bodyOf(claimed)).toBe('replaced');
    await a.close();
  });

  it('keep at most their bound of text, each body until it is taken', () => {
    const db = new Database(':memory:');
    const kept = new KeptBodies(db, 10);
    kept.check();
    kept.add(1, { document: 'abcdef', preview: null, hashes: undefined });
    kept.add(2, { document: 'ghi', preview: 'jk', hashes: undefined });
    expect(kept.keptText).toBe(6);
    expect(kept.take(2)).toBeUndefined();
    expect(kept.take(1)?.document).toBe('abcdef');
    expect(kept.take(1)).toBeUndefined();
    expect(kept.keptText).toBe(0);
    kept.add(2, { document: 'ghi', preview: 'jk', hashes: undefined });
    expect(kept.keptText).toBe(5);
    db.close();
  });
});

describe.each([
  ['sqlite', async (): Promise<Store> => openStore(`sqlite:${freshPath()}`)],
  ['postgres', async (): Promise<Store> => openStore(await createTestDatabase('mailgate_claimed'))],
])('claimed items (%s)', (_name, open) => {
  it('parse their document and preview on read, take a replaced document, and getItem answers a plain copy', async () => {
    const s = await open();
    const [x] = (await s.enqueue([encodedInput('r', 1, 'text')])).items;
    const [item] = await s.claim('r', 1, 'w', 60_000);
    expect(item?.preview).toEqual(preview);
    expect(bodyOf(item)).toBe('text');
    // A replaced document replaces its text, and its hashes no longer apply.
    const changed = { ...item!.document, comment_id: 'other' };
    item!.document = changed;
    expect(item?.documentJson).toBe(JSON.stringify(changed));
    expect(item?.hashes).toBeUndefined();
    item!.preview = undefined;
    expect(item?.preview).toBeUndefined();
    expect(item?.origin).toEqual(encodedInput('r', 1, 'text').origin);
    const moved = { ...item!.origin, id: 'elsewhere' };
    item!.origin = moved;
    expect(item?.origin).toBe(moved);
    // getItem: every field is its own, so a copy and its JSON carry the document and preview.
    const stored = await s.getItem(x!.id);
    const copy = JSON.parse(JSON.stringify({ ...stored })) as Record<string, unknown>;
    expect(copy['document']).toEqual(encodedInput('r', 1, 'text').document);
    expect(copy['preview']).toEqual(preview);
    expect(copy['origin']).toEqual(encodedInput('r', 1, 'text').origin);
    expect(copy['status']).toBe('queued');
    await s.close();
  });
});
