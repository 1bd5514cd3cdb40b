/**
 * A pushed message survives SIGKILL right after its durable write: the built `mailgate serve`
 * (raw provider, SQLite) is killed the moment a 2xx comes back (delivery running), and in a
 * second case while delivery is held back by the API answering 503. Restarted on the same store,
 * the provider's retries of the same requests are answered 2xx as duplicates and store nothing
 * new; in the end every message is one comment, billed once. (The first case takes about a
 * minute: items the killed process had claimed for delivery wait for its claim lease, 60 s.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually, killLeftovers, spawnServe, type ServeProcess } from '../service/serve-process.js';
import { BEARER_KEY, message } from './support.js';

const SENDERS = 20;
const dirs: string[] = [];
afterEach(() => killLeftovers());
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function setup(emu: StartedEmulator): { dir: string; db: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-push-crash-'));
  dirs.push(dir);
  const db = join(dir, 'mg.db');
  const config = join(dir, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: sqlite:${db}`,
      // One attempt per request: a 503 schedules the item's retry rather than holding its claim.
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { max_attempts: 1 } }`,
      // All senders come from one address: the per-client budget must let the whole burst in.
      `server: { listen: 127.0.0.1:0, api_keys: [admin-key-0123456789abcdef], push: { max_per_client: ${SENDERS} } }`,
      'delivery: { flush_ms: 0 }',
      'routes: [{ name: support, source: acme/support }]',
      'adapters:',
      '  webhooks:',
      `    - { name: worker-in, provider: raw, route: support, bearer_keys: [${BEARER_KEY}] }`,
      'log_level: warn',
      '',
    ].join('\n'),
  );
  return { dir, db, config };
}

const serve = (s: { dir: string; config: string }, emu: StartedEmulator): ServeProcess =>
  spawnServe(['--config', s.config], { cwd: s.dir, env: { TEST_API_TOKEN: emu.token } });

const messages = Array.from({ length: SENDERS }, (_, i) => message(`crash-${i}`));

/** The provider's request for message i (the same bytes and headers on every retry). */
const send = (url: string, i: number): Promise<number> =>
  fetch(`${url}/webhooks/worker-in`, {
    method: 'POST',
    headers: { 'content-type': 'message/rfc822', authorization: `Bearer ${BEARER_KEY}`, 'x-mailgate-envelope-to': `r${i}@example.com` },
    body: new Uint8Array(messages[i]!),
  }).then(
    (r) => r.status,
    () => 0, // the connection died with the process: no answer
  );

async function storedItems(db: string): Promise<{ total: number; delivered: number }> {
  const store = await openStore(`sqlite:${db}`);
  try {
    const counts = await store.outboxCounts();
    return {
      total: counts.reduce((n, c) => n + c.count, 0),
      delivered: counts.filter((c) => c.status === 'delivered').reduce((n, c) => n + c.count, 0),
    };
  } finally {
    await store.close();
  }
}

/** Restarts serve on the same store, sends every request again, and checks the end state. */
async function restartAndRetry(s: { dir: string; db: string; config: string }, emu: StartedEmulator, durable: number): Promise<void> {
  const again = serve(s, emu);
  const url = await again.url;
  const statuses = await Promise.all(messages.map((_, i) => send(url, i)));
  expect(statuses).toEqual(messages.map(() => 200));
  // The retries of what was durable stored nothing new: one item per message.
  expect((await storedItems(s.db)).total).toBe(SENDERS);
  await eventually(async () => (await storedItems(s.db)).delivered === SENDERS, `${SENDERS} delivered`);
  expect(emu.emulator.stats().comments).toBe(SENDERS);
  expect(emu.emulator.stats().ai_units).toBe(SENDERS);
  expect(durable).toBeGreaterThan(0);
  again.child.kill('SIGTERM');
  await again.exit;
}

describe('push intake: SIGKILL after the durable write', () => {
  it('killed upon the first 2xx: what was acknowledged is stored, the retries are duplicates, one comment each', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    try {
      const s = setup(emu);
      const first = serve(s, emu);
      const url = await first.url;
      let acknowledged = 0;
      const statuses = await Promise.all(
        messages.map((_, i) =>
          send(url, i).then((status) => {
            if (status === 200) {
              acknowledged++;
              first.child.kill('SIGKILL');
            }
            return status;
          }),
        ),
      );
      expect((await first.exit).signal).toBe('SIGKILL');
      expect(statuses.filter((x) => x !== 200 && x !== 0)).toEqual([]);
      // Every 2xx was durable before it was sent.
      const durable = (await storedItems(s.db)).total;
      expect(durable).toBeGreaterThanOrEqual(acknowledged);
      expect(acknowledged).toBeGreaterThan(0);
      await restartAndRetry(s, emu, durable);
    } finally {
      await emu.stop();
    }
  }, 120_000);

  it('killed while delivery is held back by 503s: the queued items survive, the retries add nothing', async () => {
    const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', status: 503 }] });
    try {
      const s = setup(emu);
      const first = serve(s, emu);
      const url = await first.url;
      const statuses = await Promise.all(messages.map((_, i) => send(url, i)));
      expect(statuses).toEqual(messages.map(() => 200));
      await eventually(() => (emu.emulator.stats().requests['sync-raw-emails']?.['503'] ?? 0) > 0, 'a delivery attempt refused');
      first.child.kill('SIGKILL');
      expect((await first.exit).signal).toBe('SIGKILL');
      const after = await storedItems(s.db);
      expect(after).toEqual({ total: SENDERS, delivered: 0 });
      expect(emu.emulator.stats().comments).toBe(0);
      emu.emulator.setFaults([]);
      await restartAndRetry(s, emu, after.total);
    } finally {
      await emu.stop();
    }
  }, 120_000);
});
