/**
 * `startService` in-process against a real emulator and SQLite: API request metrics match the
 * emulator's own request counts, `server.public_preview` reaches the HTTP server, and the drain
 * bound comes from `delivery.drain_ms` unless the `--drain-ms` flag overrides it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { configOf } from '../../src/service/run.js';
import type { FaultRule } from '../../src/emulator/index.js';
import { createLogger } from '../../src/logger.js';
import type { Service } from '../../src/service/index.js';
import { textMessage } from '../imap/messages.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { eventually, ROOT } from './serve-process.js';

/** The compiled service: its parse pool needs the compiled worker (`npm test` builds first). */
const SERVICE = pathToFileURL(join(ROOT, 'dist', 'src', 'service', 'index.js')).href;
const startService: typeof import('../../src/service/index.js').startService = async (...args) =>
  ((await import(SERVICE)) as typeof import('../../src/service/index.js')).startService(...args);

const ADMIN_KEY = 'admin-key-0123456789abcdef';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function mailDir(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-serve-config-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'mail'));
  for (let i = 1; i <= count; i++) writeFileSync(join(dir, 'mail', `${i}.eml`), textMessage(i));
  return dir;
}

type Extra = { server?: Record<string, unknown>; delivery?: Record<string, unknown> };

function config(dir: string, emu: StartedEmulator, extra: Extra = {}) {
  return loadConfig({ overrides: raw(dir, emu, extra) as never });
}

/** The configuration as written in mailgate.yaml (JSON is YAML). */
function raw(dir: string, emu: StartedEmulator, extra: Extra = {}) {
  return {
    store: `sqlite:${join(dir, 'mailgate.db')}`,
    api: { url: emu.url, token: emu.token, retry: { max_attempts: 10, base_delay_ms: 10, max_delay_ms: 20 } },
    server: { listen: '127.0.0.1:0', api_keys: [ADMIN_KEY], ...extra.server },
    delivery: { max_documents: 5, flush_ms: 0, ...extra.delivery },
    routes: [{ name: 'support', source: 'acme/support' }],
    adapters: { files: [{ name: 'inbox', route: 'support', paths: [join(dir, 'mail')] }] },
    log_level: 'info',
  };
}

/** A logger writing JSON lines into `lines`. */
function capture(lines: Array<Record<string, unknown>>) {
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return createLogger({ level: 'info', destination: stream });
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

async function withEmulator(faults: FaultRule[], fn: (emu: StartedEmulator) => Promise<void>): Promise<void> {
  const emu = await startEmulator({ autoCreateSources: true, faults });
  try {
    await fn(emu);
  } finally {
    await emu.stop();
  }
}

describe('mailgate serve: API request metrics', () => {
  it('counts every attempt by endpoint and status as the emulator saw them, with a latency histogram', async () => {
    await withEmulator([{ endpoint: 'sync-raw-emails', status: 503, times: 3 }], async (emu) => {
      const dir = mailDir(12);
      const service = await startService(config(dir, emu, { server: { public_preview: true } }), { logger: createLogger(false) });
      try {
        await eventually(() => emu.emulator.stats().comments === 12, '12 comments');
        await eventually(async () => (await service.runtime.store.outboxDepth()) === 0, 'the outbox to empty');
        const seen = emu.emulator.stats().requests['sync-raw-emails'] ?? {};
        expect(seen['503']).toBe(3);
        expect(seen['200']).toBeGreaterThanOrEqual(3);
        const text = await (await fetch(`${service.url}/metrics`)).text();
        expect(sample(text, 'mailgate_api_requests_total{endpoint="sync-raw-emails",status="503"}')).toBe(3);
        expect(sample(text, 'mailgate_api_requests_total{endpoint="sync-raw-emails",status="200"}')).toBe(seen['200']);
        expect(sample(text, 'mailgate_api_request_duration_seconds_count{endpoint="sync-raw-emails",status="200"}')).toBe(seen['200']);
        expect(sample(text, 'mailgate_api_request_duration_seconds_count{endpoint="sync-raw-emails",status="503"}')).toBe(3);
        expect(sample(text, 'mailgate_api_request_duration_seconds_bucket{le="+Inf",endpoint="sync-raw-emails",status="503"}')).toBe(3);
        expect(sample(text, 'mailgate_api_request_duration_seconds_sum{endpoint="sync-raw-emails",status="200"}')).toBeGreaterThan(0);
        expect(sample(text, 'mailgate_messages_delivered_total{route="support",adapter="files"}')).toBe(12);
        expect(sample(text, 'mailgate_ai_units_total{route="support"}')).toBe(12);

        // server.public_preview: the parsing endpoints answer without a key, the rest of /api does not.
        const preview = await fetch(`${service.url}/api/preview`, {
          method: 'POST',
          headers: { 'content-type': 'message/rfc822' },
          body: textMessage(99),
        });
        expect(preview.status).toBe(200);
        expect(((await preview.json()) as { comment: { id: string } }).comment.id).toMatch(/^[0-9a-f]+$/);
        expect((await fetch(`${service.url}/api/status`)).status).toBe(401);
      } finally {
        await service.stop();
      }
    });
  });
});

describe('mailgate serve: configured drain bound', () => {
  /** A service with six items queued; with `flag`, configured as `mailgate serve --config FILE --drain-ms <flag>` is. */
  async function queuedService(
    emu: StartedEmulator,
    drainMs: number,
    flag?: number,
  ): Promise<{ service: Service; lines: Array<Record<string, unknown>> }> {
    const lines: Array<Record<string, unknown>> = [];
    const dir = mailDir(6);
    const extra = { delivery: { drain_ms: drainMs } };
    const file = join(dir, 'mailgate.yaml');
    writeFileSync(file, JSON.stringify(raw(dir, emu, extra)));
    const configured = flag === undefined ? config(dir, emu, extra) : configOf({ configFile: file, env: {}, drainMs: flag }).config;
    const service = await startService(configured, { logger: capture(lines) });
    await eventually(async () => (await service.runtime.store.outboxDepth()) === 6, '6 queued items');
    return { service, lines };
  }
  const stopping = (lines: Array<Record<string, unknown>>) => lines.find((l) => String(l['msg']).startsWith('stopping: intake first'));

  it('uses delivery.drain_ms, and keeps what the API did not take queued', async () => {
    await withEmulator([{ endpoint: 'sync-raw-emails', status: 503 }], async (emu) => {
      const { service, lines } = await queuedService(emu, 0);
      // public_preview defaults to false: the preview API needs a key.
      const preview = await fetch(`${service.url}/api/preview`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822' },
        body: textMessage(1),
      });
      expect(preview.status).toBe(401);
      expect(await service.stop()).toEqual({ drained: false });
      expect(stopping(lines)?.['drainMs']).toBe(0);
      expect(lines.some((l) => l['code'] === 'MAILGATE_ERR_SERVICE_DRAIN_TIMEOUT' && l['queued'] === 6)).toBe(true);
      expect(emu.emulator.stats().comments).toBe(0);
    });
  });

  it('lets the --drain-ms flag override delivery.drain_ms', async () => {
    await withEmulator([{ endpoint: 'sync-raw-emails', status: 503 }], async (emu) => {
      // Configured for ten minutes; the flag's 0 stops at once (a wrong precedence would hang the test).
      const { service, lines } = await queuedService(emu, 600_000, 0);
      expect(await service.stop()).toEqual({ drained: false });
      expect(stopping(lines)?.['drainMs']).toBe(0);
    });
  });
});
