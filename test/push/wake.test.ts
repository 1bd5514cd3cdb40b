/**
 * The runtime's push sink wakes delivery on each durable commit (pushed items go out at once,
 * not after delivery's idle wait) and reports each committed message (`item:stored`) on the
 * runtime's event stream (the service's metrics).
 */
import { contentKey } from '../../src/pipeline/origin.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { ROOT } from '../service/serve-process.js';
import { message } from './support.js';

/** The compiled runtime: its parse pool needs the compiled worker. */
const RUNTIME = pathToFileURL(join(ROOT, 'dist', 'src', 'runtime', 'index.js')).href;
const dir = mkdtempSync(join(tmpdir(), 'mailgate-push-wake-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runtime push sink', () => {
  it('wakes delivery and reports each committed message with its result', async () => {
    const { createRuntime } = (await import(RUNTIME)) as typeof import('../../src/runtime/index.js');
    const config = loadConfig({
      overrides: {
        store: `sqlite:${join(dir, 'mg.db')}`,
        api: { url: 'http://127.0.0.1:9', token: 'unused-in-a-dry-run' },
        routes: [{ name: 'support', source: 'acme/support' }],
      } as never,
    });
    const committed: Array<{ adapter: string; outcome: string; via: string }> = [];
    const runtime = await createRuntime({ config, logger: createLogger(false), dryRun: true });
    runtime.events.on('item:stored', (e) => void committed.push({ adapter: e.adapter, outcome: e.outcome, via: e.via }));
    try {
      let wakes = 0;
      runtime.delivery.wake = () => void wakes++;
      const inbound = {
        raw: message('wake'),
        key: contentKey(message('wake')),
        route: 'support',
        receivedAt: new Date(),
        origin: { adapter: 'webhook:raw', instance: 'w', id: contentKey(message('wake')), details: {} },
      };
      await runtime.intake.accept([inbound], { whenFull: 'refuse' });
      expect(wakes).toBe(1);
      await runtime.intake.accept([inbound], { whenFull: 'refuse' });
      // A duplicate stores nothing: nothing new to deliver.
      expect(wakes).toBe(1);
      expect(committed).toEqual([
        { adapter: 'webhook:raw', outcome: 'queued', via: 'push' },
        { adapter: 'webhook:raw', outcome: 'duplicate', via: 'push' },
      ]);
    } finally {
      await runtime.close();
    }
  });
});
