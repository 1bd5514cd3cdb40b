/**
 * Poison messages pushed by a sender (a webhook, SMTP): a message whose parse the process never
 * survives would make its sender retry for ever. Each attempt is counted in the store under the
 * message's content key before its parse; the sender's retry after `parsing.poison_after`
 * attempts is answered as stored (200, 250) and the message is a dead letter
 * MAILGATE_ERR_INTAKE_POISON with its raw bytes. Killed from here while it is parsed, three times
 * running, through `mailgate serve` on a real SQLite store; and a message that kills its parse
 * worker (a real worker exit) is set aside within its one request.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulator } from '../../adapters/index.js';
import { ROOT } from '../cli/support/dist.js';
import { RawClient } from '../smtp/client.js';
import { mostAttempts } from './attempts.js';

const SECRET = 'push-poison-webhook-secret-0123456789';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-push-poison-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mail = (id: string, hook?: string) =>
  `${hook ? `X-Mailgate-Internal-Test-Hook: ${hook}\r\n` : ''}From: a@example.com\r\nTo: support@example.com\r\nSubject: ${id}\r\nMessage-ID: <${id}@push-poison.test>\r\n\r\nbody ${id}\r\n`;

interface Serve {
  child: ChildProcess;
  url: string;
  smtp: number;
  exited: Promise<unknown>;
}

async function serve(store: string): Promise<Serve> {
  const child = spawn(process.execPath, [join(ROOT, 'test', 'crash', 'push-poison-child.mjs'), join(ROOT, 'dist'), store, SECRET], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ready = await new Promise<{ url: string; smtp: number }>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n', 1)[0]!) as { url: string; smtp: number });
    });
    void exited.then(() => reject(new Error(`serve exited before listening: ${err}`)));
  });
  return { child, exited, ...ready };
}

async function kill(s: Serve): Promise<void> {
  s.child.kill('SIGKILL');
  await s.exited;
}

async function postWebhook(url: string, raw: string): Promise<number> {
  const { simulator: sim } = await simulator();
  const hook = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, url);
  const req = sim.request(hook, Buffer.from(raw), { url: '/webhooks/raw-in', now: Date.now() });
  const res = await fetch(`${url}/webhooks/raw-in`, { method: 'POST', headers: req.headers, body: new Uint8Array(req.body) });
  return res.status;
}

type StoreModule = typeof import('../../src/store/index.js');

/** The store's dead letters with their raw bytes, and the count of the others, read after serve has stopped. */
async function outcome(store: string): Promise<{ dead: Array<{ code: string; raw: string }>; stored: number }> {
  const { openStore } = (await import(pathToFileURL(join(ROOT, 'dist', 'src', 'store', 'index.js')).href)) as StoreModule;
  const s = await openStore(`sqlite:${join(store, 'mailgate.db')}`);
  try {
    const dead = [];
    for (const d of await s.listDeadLetters({ limit: 10 })) {
      dead.push({ code: d.error.code, raw: (await s.getDeadLetter(d.id))!.raw!.toString('latin1') });
    }
    const counts = await s.outboxCounts();
    const stored = counts.filter((c) => c.status !== 'dead').reduce((n, c) => n + c.count, 0);
    return { dead, stored };
  } finally {
    await s.close();
  }
}

/**
 * Pushes `raw` with `send` three times, killing serve each time once the parse of it has been
 * counted (it hangs its worker: the process never answers), then a fourth time: its answer.
 */
async function killedThreeTimes(store: string, raw: string, send: (s: Serve) => Promise<number>): Promise<{ answer: number; s: Serve }> {
  for (let run = 1; run <= 3; run++) {
    const s = await serve(store);
    const answer = send(s).catch(() => 0);
    const end = Date.now() + 60_000;
    while ((await mostAttempts(join(store, 'mailgate.db'))) < run) {
      if (Date.now() > end) throw new Error(`run ${run}: the pushed message was never counted`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await kill(s);
    expect(await answer).toBe(0);
  }
  const s = await serve(store);
  return { answer: await send(s), s };
}

describe('poison messages pushed by a sender', () => {
  it('webhook: a message the process never survives is answered 200 on the retry after poison_after attempts, and is a dead letter with its raw bytes', async () => {
    const store = join(dir, 'webhook');
    mkdirSync(store);
    const poison = mail('webhook-poison', 'hang');
    const { answer, s } = await killedThreeTimes(store, poison, (srv) => postWebhook(srv.url, poison));
    try {
      expect(answer).toBe(200);
      // The sender's next retry is a duplicate: answered at once (its count was kept, so it is not
      // parsed again), nothing stored again.
      expect(await postWebhook(s.url, poison)).toBe(200);
      // A message that kills its parse worker each time is set aside within its one request.
      expect(await postWebhook(s.url, mail('webhook-crash', 'crash'))).toBe(200);
      expect(await postWebhook(s.url, mail('webhook-fine'))).toBe(200);
      const metrics = await (await fetch(`${s.url}/metrics`)).text();
      expect(metrics).toMatch(/^mailgate_messages_poison_total\{[^}]*route="support"[^}]*\} 2$/m);
    } finally {
      await kill(s);
    }
    const result = await outcome(store);
    expect(result.dead.map((d) => d.code)).toEqual(['MAILGATE_ERR_INTAKE_POISON', 'MAILGATE_ERR_INTAKE_POISON']);
    expect(result.dead[0]!.raw).toBe(poison);
    expect(result.dead[1]!.raw).toBe(mail('webhook-crash', 'crash'));
    expect(result.stored).toBe(1);
  }, 300_000);

  it('SMTP: a message the process never survives is answered 250 on the retry after poison_after attempts, and is a dead letter with its raw bytes', async () => {
    const store = join(dir, 'smtp');
    mkdirSync(store);
    const poison = mail('smtp-poison', 'hang');
    const { answer, s } = await killedThreeTimes(store, poison, (srv) => RawClient.send(srv.smtp, poison));
    try {
      expect(answer).toBe(250);
      expect(await RawClient.send(s.smtp, mail('smtp-fine'))).toBe(250);
    } finally {
      await kill(s);
    }
    const result = await outcome(store);
    expect(result.dead.map((d) => d.code)).toEqual(['MAILGATE_ERR_INTAKE_POISON']);
    // SMTP stores the message as it was received (CRLF lines, no Received header added here).
    expect(result.dead[0]!.raw).toBe(poison);
    expect(result.stored).toBe(1);
  }, 300_000);
});
