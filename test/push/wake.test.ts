/**
 * The runtime's push sink wakes delivery on each durable commit (pushed items go out at once,
 * not after delivery's idle wait) and hands the commit to `onPushCommit` (the service's metrics).
 */
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
    const committed: Array<{ adapter: string; duplicate: boolean }> = [];
    const runtime = await createRuntime({
      config,
      logger: createLogger(false),
      dryRun: true,
      onPushCommit: (c) =>
        c.forEach(({ inbound, result }) => committed.push({ adapter: inbound.origin.adapter, duplicate: result.duplicate })),
    });
    try {
      let wakes = 0;
      runtime.delivery.wake = () => void wakes++;
      const inbound = { raw: message('wake'), route: 'support', receivedAt: new Date(), origin: { adapter: 'webhook:raw', account: 'w' } };
      await runtime.pushSink.submit([inbound]);
      expect(wakes).toBe(1);
      await runtime.pushSink.submit([inbound]);
      expect(wakes).toBe(2);
      expect(committed).toEqual([
        { adapter: 'webhook:raw', duplicate: false },
        { adapter: 'webhook:raw', duplicate: true },
      ]);
    } finally {
      await runtime.close();
    }
  });
});
