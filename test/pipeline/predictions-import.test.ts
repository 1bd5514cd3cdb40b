/**
 * `mailgate import --mode predict` against a real emulator over HTTP: predictions are saved
 * (SQLite and PostgreSQL) and listed by `mailgate predictions list`; a route's JSONL and
 * webhook sinks receive every prediction; an import killed with SIGKILL and run again loses
 * nothing and repeats at most one sink batch.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SINK_BATCH } from '../../src/sinks/worker.js';
import type { PredictionRecord } from '../../src/sinks/outputs.js';
import { runCli, writeMbox } from '../crash/support.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase, stopTestServer } from '../support/postgres.js';
import { mailgate } from './cli-io.js';
import { startReceiver, verifySignature } from './webhook-receiver.js';

const DATASET = 'acme/triage';
let dir: string;
let emu: StartedEmulator;

async function createDataset(e: StartedEmulator): Promise<void> {
  const res = await fetch(`${e.url}/api/v1/datasets/${DATASET}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${e.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ dataset: {} }),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-predict-'));
  emu = await startEmulator();
  await createDataset(emu);
});
afterAll(async () => {
  await emu.stop();
  await stopTestServer();
  rmSync(dir, { recursive: true, force: true });
});

function jsonl(file: string): PredictionRecord[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as PredictionRecord);
}

/** Lines the sink has finished writing; a read beside its append can end inside a line. */
function linesEnded(file: string): number {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, 'utf8');
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

async function listed(store: string, ...args: string[]): Promise<PredictionRecord[]> {
  const r = await mailgate('predictions', 'list', '--store', store, '--json', ...args);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PredictionRecord[];
}

/** A configuration file with one predict route and its sink. */
function configFile(name: string, e: StartedEmulator, store: string, sink: Record<string, string>, maxDocuments = 100): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    JSON.stringify({
      store,
      api: { url: e.url, token: e.token },
      delivery: { max_documents: maxDocuments },
      routes: [{ name, mode: 'predict', dataset: DATASET, sink }],
    }),
  );
  return file;
}

describe.each([
  ['sqlite', async () => `sqlite:${join(dir, 'listed.db')}`],
  ['postgres', () => createTestDatabase('mailgate_predict')],
])('mailgate import --mode predict on %s', (_name, storeUrl) => {
  it('saves one prediction per message and `mailgate predictions list` shows them', async () => {
    const store = await storeUrl();
    const mbox = join(dir, `listed-${_name}.mbox`);
    writeMbox(mbox, 60, `refund-${_name}`);
    const run = await mailgate(
      'import',
      '--yes',
      mbox,
      '--api-url',
      emu.url,
      '--token',
      emu.token,
      '--mode',
      'predict',
      '--dataset',
      DATASET,
      '--store',
      store,
      '--workers',
      '1',
      '--json',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ route: 'import', delivered: 60, deadLettered: 0, aiUnits: 60 });
    expect(JSON.parse(run.stdout).sinkSent).toBeUndefined();

    const all = await listed(store, '--limit', '1000');
    expect(all).toHaveLength(60);
    expect(new Set(all.map((p) => p.comment_id)).size).toBe(60);
    for (const p of all) {
      expect(p).toMatchObject({ route: 'import', model: { version: expect.any(Number), time: expect.any(String) } });
      expect(p.key).toMatch(/^files:/);
      expect(Array.isArray(p.predictions)).toBe(true);
    }
    // "refund" in the subject: the emulator's toy model answers with Billing labels.
    expect(all.every((p) => p.predictions.some((l) => l.name[0] === 'Billing'))).toBe(true);

    const first = await listed(store, '--limit', '25');
    const next = await listed(store, '--limit', '25', '--after', String(first.at(-1)!.id));
    expect([...first, ...next].map((p) => p.id)).toEqual(all.slice(0, 50).map((p) => p.id));
    expect(await listed(store, '--route', 'elsewhere')).toEqual([]);

    const table = await mailgate('predictions', 'list', '--store', store, '--limit', '2');
    expect(table.stdout.split('\n')[0]).toBe('id\troute\tsaved at\tcomment id\tmodel\tlabels');
    expect(table.stdout.trim().split('\n')).toHaveLength(3);
  });
});

describe('prediction sinks of an import', () => {
  it('writes every prediction to the JSONL file once and POSTs signed batches; a second run sends nothing', async () => {
    const secret = 'sink-secret-0123456789abcdef0123456789';
    const receiver = await startReceiver((n) => (n < 2 ? 503 : 200), { 'retry-after': '0' });
    try {
      const store = `sqlite:${join(dir, 'sinks.db')}`;
      const file = join(dir, 'out', 'sinks.jsonl');
      const config = configFile('triage', emu, store, { jsonl: file, webhook: receiver.url, webhook_secret: secret });
      const mbox = join(dir, 'sinks.mbox');
      writeMbox(mbox, 150, 'sinks');
      const run = await mailgate('import', '--yes', mbox, '--config', config, '--workers', '1', '--json');
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ delivered: 150, sinkSent: 300, sinkFlushed: true });

      const stored = await listed(store, '--limit', '1000');
      const lines = jsonl(file);
      expect(lines).toHaveLength(150);
      expect(lines.map((l) => l.id).sort((a, b) => a - b)).toEqual(stored.map((p) => p.id));
      expect(lines[0]).toEqual(stored.find((p) => p.id === lines[0]!.id));

      expect(receiver.posts.slice(0, 2).map((p) => p.status)).toEqual([503, 503]);
      for (const post of receiver.posts) expect(verifySignature(secret, post.body, post.signature)).toBe(true);
      const posted = receiver.accepted().flatMap((b) => b.predictions.map((p) => p.id));
      expect(posted.sort((a, b) => a - b)).toEqual(stored.map((p) => p.id));
      expect(receiver.accepted().every((b) => b.route === 'triage' && b.predictions.length <= DEFAULT_SINK_BATCH)).toBe(true);

      const posts = receiver.posts.length;
      const again = await mailgate('import', '--yes', mbox, '--config', config, '--workers', '1', '--json');
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ queued: 0, delivered: 0, sinkSent: 0, sinkFlushed: true });
      expect(jsonl(file)).toHaveLength(150);
      expect(receiver.posts).toHaveLength(posts);
    } finally {
      await receiver.close();
    }
  });

  it('an import killed with SIGKILL and run again leaves every stored prediction in the file, repeating at most one batch', async () => {
    // A slow API keeps the import running while the sink already writes.
    const slow = await startEmulator({ faults: [{ endpoint: 'predict-raw-emails', delay_ms: 60 }] });
    try {
      await createDataset(slow);
      const store = `sqlite:${join(dir, 'killed.db')}`;
      const file = join(dir, 'killed.jsonl');
      const config = configFile('killed', slow, store, { jsonl: file }, 40);
      const mbox = join(dir, 'killed.mbox');
      writeMbox(mbox, 1200, 'killed');
      const args = ['import', '--yes', mbox, '--config', config, '--workers', '1', '--lease-ms', '1000', '--json'];
      const first = runCli(args, dir);
      let exited = false;
      void first.exited.then(() => (exited = true));
      while (!exited && linesEnded(file) < 80) await new Promise((r) => setTimeout(r, 5));
      first.child.kill('SIGKILL');
      const killed = await first.exited;
      expect(killed.signal, killed.stderr).toBe('SIGKILL');
      const before = jsonl(file).length;
      expect(before).toBeGreaterThanOrEqual(80);

      const second = await runCli(args, dir).exited;
      expect(second.code, second.stderr).toBe(0);
      const stored = await listed(store, '--limit', '10000');
      expect(new Set(stored.map((p) => p.comment_id)).size).toBe(1200);
      const ids = jsonl(file).map((l) => l.id);
      const seen = new Set(ids);
      expect(stored.filter((p) => !seen.has(p.id))).toEqual([]);
      expect(ids.length - seen.size).toBeLessThanOrEqual(DEFAULT_SINK_BATCH);
    } finally {
      await slow.stop();
    }
  });
});
