/**
 * A pulled call's parse-attempt counts are forgotten once it is durable, without the call (nor
 * the next call's commit) waiting for that write: before, each pull call awaited it, so the next
 * commit started one store round trip late. Real SQLite store; its clearParseAttempts is held.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../src/config/schema.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake, type ParseFn } from '../../src/pipeline/intake.js';
import { poisonGuard } from '../../src/pipeline/poison.js';
import type { Inbound } from '../../src/pipeline/types.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const config = ConfigSchema.parse({ routes: [{ name: 'r', source: 'acme/order' }] });
const routes = new Map([['r', config.routes[0]!]]);
const parse: ParseFn = async (bytes, o) => encodePreview(await preview(bytes, o));
const batch = (from: number, n: number): Inbound[] =>
  Array.from({ length: n }, (_, k) => ({
    raw: Buffer.from(`From: a@x.com\r\nSubject: s${from + k}\r\nMessage-ID: <f${from + k}@x.com>\r\n\r\nbody\r\n`),
    key: `files:/f.mbox:${from + k}`,
    origin: fileOrigin('/f.mbox', from + k),
    route: 'r',
    receivedAt: new Date(),
  }));

/** The outbox key of a message: its own key within its route's target. */
const keyOf = (m: Inbound): string => `${m.key}|acme/order`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let store: Store | undefined;
afterEach(async () => store?.close());

describe('poison counts of pulled mail', () => {
  it('a pull call and the next one are stored while the write forgetting their counts is held', async () => {
    const real = await openStore('sqlite::memory:');
    store = real;
    const wrapped = Object.create(real) as Store;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const clears: string[][] = [];
    wrapped.clearParseAttempts = async (route, keys) => {
      clears.push([...keys]);
      await held;
      return real.clearParseAttempts(route, keys);
    };
    const intake = createIntake({ store: wrapped, routes, parse, parsing: {}, maxOutbox: 10_000, poison: poisonGuard(wrapped, 3) });
    const first = await intake.accept(batch(0, 3));
    const second = await intake.accept(batch(3, 2));
    expect([...first, ...second].map((r) => r.duplicate)).toEqual([false, false, false, false, false]);
    expect(await real.outboxDepth('r')).toBe(5);
    const keys = batch(0, 5).map(keyOf);
    for (let i = 0; i < 100 && clears.flat().length < 5; i++) await sleep(10);
    expect(clears.flat().sort()).toEqual([...keys].sort());
    // Counted, and still there until the held writes go through.
    expect((await real.parseAttempts('r', keys)).size).toBe(5);
    release();
    for (let i = 0; i < 100 && (await real.parseAttempts('r', keys)).size > 0; i++) await sleep(10);
    expect(await real.parseAttempts('r', keys)).toEqual(new Map());
  });
});
