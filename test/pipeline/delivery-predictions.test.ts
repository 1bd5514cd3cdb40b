/**
 * Delivery of a predict route against a real emulator over HTTP and real SQLite: the
 * predictions of accepted items are saved with the model that answered, sinks are woken, and
 * the save comes before the items are marked delivered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient } from '../../src/api/client.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { createDeliverFn, createDelivery } from '../../src/pipeline/delivery/index.js';
import { encodePreview } from '../../src/pipeline/encoded.js';
import { createIntake } from '../../src/pipeline/intake.js';
import { preview } from '../../src/preview/index.js';
import { openStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { fileOrigin } from '../../adapters/files/identity.js';

const config = ConfigSchema.parse({ routes: [{ name: 'p', mode: 'predict', dataset: 'acme/triage' }] });
const route = config.routes[0]!;
const msg = (i: number) =>
  Buffer.from(
    `From: A <a@x.com>\r\nTo: b@y.com\r\nSubject: refund ${i}\r\nMessage-ID: <q${i}@x.com>\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nPlease refund invoice ${i}.\r\n`,
  );

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function setup(n: number): Promise<{ store: Store; emu: StartedEmulator }> {
  const emu = await startEmulator();
  const store = await openStore('sqlite::memory:');
  cleanup.push(
    () => emu.stop(),
    () => store.close(),
  );
  const res = await fetch(`${emu.url}/api/v1/datasets/acme/triage`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${emu.token}`, 'content-type': 'application/json' },
    body: '{"dataset":{}}',
  });
  expect(res.status).toBe(200);
  const intake = createIntake({
    store,
    routes: new Map([[route.name, route]]),
    parse: async (raw, o) => encodePreview(await preview(raw, o)),
    parsing: {},
    maxOutbox: 10_000,
  });
  await intake.accept(
    Array.from({ length: n }, (_, i) => ({
      raw: msg(i),
      key: `files:/p.mbox:${i}`,
      origin: fileOrigin('/p.mbox', i),
      route: 'p',
      receivedAt: new Date(),
    })),
  );
  return { store, emu };
}

function delivery(store: Store, emu: StartedEmulator, leaseMs = 10_000) {
  const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: { maxAttempts: 1 } });
  return createDelivery({
    store,
    routes: [route],
    deliver: createDeliverFn({ client, ledger: store, config }),
    owner: 'test',
    leaseMs,
    claimLimit: 100,
    concurrency: 1,
    maxItemAttempts: 3,
  });
}

describe('delivery of a predict route', () => {
  it('saves the predictions of accepted items with the answering model and wakes the listeners', async () => {
    const { store, emu } = await setup(8);
    const d = delivery(store, emu);
    const woken: string[] = [];
    const off = d.onPredictionsSaved((r) => woken.push(r));
    d.onPredictionsSaved(() => {
      throw new Error('a failing listener changes nothing');
    });
    expect(await d.runOnce(route)).toBe(8);
    off();
    expect(d.counters).toMatchObject({ delivered: 8, aiUnits: 8 });
    expect(woken).toEqual(['p']);
    const saved = await store.listPredictions({ route: 'p', limit: 100 });
    const items = await store.listPredictions({ limit: 100 });
    expect(items).toHaveLength(8);
    expect(new Set(saved.map((p) => p.commentId)).size).toBe(8);
    for (const p of saved) {
      expect(p.key).toMatch(/^files:/);
      expect(p.model).toEqual({ version: expect.any(Number), time: expect.any(String) });
      expect(p.predictions.some((l) => l.name[0] === 'Billing')).toBe(true);
    }
  });

  it('saves before marking delivered: a failed save leaves the items queued, to be predicted again', async () => {
    const { store, emu } = await setup(3);
    const failing: Store = Object.create(store, {
      savePredictions: {
        value: async () => {
          throw new Error('disk full');
        },
      },
    }) as Store;
    await expect(delivery(failing, emu, 50).runOnce(route)).rejects.toThrow('disk full');
    expect(await store.outboxDepth('p')).toBe(3);
    expect(await store.listPredictions({ limit: 10 })).toEqual([]);
    // Once the store works again and the claim lease is over, the items are predicted again and saved.
    const again = delivery(store, emu);
    while ((await again.runOnce(route)) === 0) await new Promise((r) => setTimeout(r, 10));
    expect(await store.outboxDepth('p')).toBe(0);
    expect(await store.listPredictions({ limit: 10 })).toHaveLength(3);
    expect(emu.emulator.stats().ai_units).toBe(6);
  });
});
