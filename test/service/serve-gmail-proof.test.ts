/**
 * The Gmail proof cases through `mailgate serve` (the built CLI as a child process), the Gmail
 * stand-in (this process, over HTTP) and the API emulator: 2,000 messages (30 % with
 * attachments) exactly once through a rate-limit burst and a token expiring mid-sync, the
 * stand-in measuring the units per second; an expired historyId; new mail through a push within
 * 2 s, forged pushes refused with nothing fetched, archive after delivery, and with the push
 * dropped, the poll. SIGKILL mid-sync and a refused mailbox beside a working one are in
 * serve-api-proof.test.ts (every API mailbox kind). In each case the emulator's counters show
 * comments = AI units = messages.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sampleMessage, startGmailStandIn, type GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { gmailEnv, gmailStatus, writeGmailConfig } from './gmail-serve-setup.js';
import { freePort } from './api-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

let dir: string;
let standIn: GmailStandIn;
let emu: StartedEmulator;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-gmail-proof-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  standIn = await startGmailStandIn();
  emu = await startEmulator({ autoCreateSources: true });
});
afterEach(async () => {
  killLeftovers();
  await standIn.close();
  await emu.stop();
});

const USER = 'support@example.test';

/** `n` messages from `from`; 30 % with an attachment, one in ten of all a large one (read with format=full). */
function fill(user: string, n: number, from = 0, tag = 'proof'): string[] {
  return standIn.deliver(
    user,
    Array.from({ length: n }, (_, k) => {
      const i = from + k;
      const bytes = i % 10 === 0 ? 150_000 : i % 10 < 3 ? 20_000 : undefined;
      return sampleMessage(i, { mailbox: user, tag, ...(bytes === undefined ? {} : { attachmentBytes: bytes }) });
    }),
  );
}

const stats = () => emu.emulator.stats();

describe('mailgate serve: Gmail proof cases, billed through the emulator', () => {
  it('2,000 messages (30 % with attachments) exactly once through a rate-limit burst and a token expiring mid-sync', async () => {
    standIn.addMailbox(USER);
    fill(USER, 2000);
    standIn.rateLimit(USER, { count: 3, status: 429, reason: 'rateLimitExceeded' });
    const config = writeGmailConfig(dir, 'big', standIn, emu, [USER], { entry: 'poll_interval_ms: 60000, full_format_over_bytes: 100000' });
    const serve = spawnServe(['--config', config], { cwd: dir, env: gmailEnv(emu) });
    const url = await serve.url;
    await eventually(() => stats().comments >= 600, '600 comments', 120_000);
    standIn.identity.expireAll();
    standIn.rateLimit(USER, { count: 3, status: 403, reason: 'userRateLimitExceeded' });
    await eventually(() => stats().comments === 2000, '2000 comments', 180_000);
    await eventually(async () => (await gmailStatus(url))[0]?.state === 'idle', 'idle');
    const [line] = await gmailStatus(url);
    expect(line).toMatchObject({ name: `workspace/${USER}`, healthy: true, messages: 2000 });
    expect(stats().ai_units).toBe(2000);
    const u = standIn.stats(USER);
    // The burst was honoured and the quota never exceeded: every refusal was an injected one.
    expect(u.rateLimited).toBe(6);
    expect(u.overLimit).toBe(0);
    expect(u.maxUnitsPerSecond).toBeLessThanOrEqual(250);
    expect(standIn.maxBatch).toBeLessThanOrEqual(50);
    expect(standIn.identity.issued).toBeGreaterThanOrEqual(2);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 300_000);

  it('an expired historyId: the labels listed again since the last checkpoint, 0 extra AI units', async () => {
    standIn.addMailbox(USER);
    fill(USER, 100);
    const config = writeGmailConfig(dir, 'expired', standIn, emu, [USER], { entry: 'poll_interval_ms: 2000' });
    const serve = spawnServe(['--config', config], { cwd: dir, env: gmailEnv(emu) });
    await serve.url;
    await eventually(() => stats().comments === 100, '100 comments');
    standIn.expireHistory(USER);
    fill(USER, 10, 500, 'after');
    await eventually(() => stats().comments === 110, '110 comments');
    await eventually(() => (serve.stdout() + serve.stderr()).includes('MAILGATE_ERR_GMAIL_HISTORY_RESET'), 'the reset logged');
    expect(stats().ai_units).toBe(110);
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
  }, 120_000);

  it('new mail through a push within 2 s; forged pushes refused, nothing fetched; archived after delivery; with the push dropped, the poll', async () => {
    standIn.addMailbox(USER);
    fill(USER, 5);
    const port = await freePort();
    const config = writeGmailConfig(dir, 'push', standIn, emu, [USER], {
      pushPort: port,
      entry: 'poll_interval_ms: 8000, after_delivery: archive',
    });
    const serve = spawnServe(['--config', config], { cwd: dir, env: gmailEnv(emu) });
    await serve.url;
    await eventually(() => stats().comments === 5 && standIn.pubsub.watches === 1, 'first round and a watch');
    const inInbox = () => [...standIn.mailbox(USER).messages.values()].filter((m) => m.labelIds.has('INBOX')).length;
    await eventually(() => inInbox() === 0, 'archived after delivery');
    // Forged pushes: refused, and no Gmail call follows them.
    const calls = standIn.stats(USER).calls;
    const note = { emailAddress: USER, historyId: standIn.mailbox(USER).historyId };
    expect(await standIn.pubsub.push(note, 'signature')).toBe(401);
    expect(await standIn.pubsub.push(note, 'audience')).toBe(401);
    expect(await standIn.pubsub.push(note, 'account')).toBe(401);
    await new Promise((r) => setTimeout(r, 500));
    expect(standIn.stats(USER).calls).toBe(calls);
    const [id] = fill(USER, 1, 100, 'pushed');
    const sent = Date.now();
    await eventually(() => stats().comments === 6, 'the pushed message');
    const latency = Date.now() - sent;
    expect(standIn.pubsub.deliveries.filter((d) => d.forged === undefined && d.status === 204).length).toBeGreaterThanOrEqual(1);
    expect(latency, `pushed message took ${latency} ms`).toBeLessThan(2000);
    await eventually(() => !standIn.mailbox(USER).messages.get(id!)!.labelIds.has('INBOX'), 'the pushed message archived');
    // The route's properties as the API stored them: {mailbox} and {labels} filled from the origin.
    const commentId = Buffer.from('<pushed-100@example.com>').toString('hex');
    const res = await fetch(`${emu.url}/api/v1/sources/acme/support/comments/${commentId}`, {
      headers: { authorization: `Bearer ${emu.token}` },
    });
    const stored = ((await res.json()) as { comment: { user_properties: Record<string, string> } }).comment;
    expect(stored.user_properties['string:Mailbox']).toBe(USER);
    expect(stored.user_properties['string:Labels']!.split(',').sort()).toEqual(['INBOX', 'UNREAD']);
    standIn.pubsub.drop = true;
    fill(USER, 1, 200, 'polled');
    await eventually(() => stats().comments === 7, 'the polled message', 30_000);
    expect(stats().ai_units).toBe(7);
    expect(standIn.mailbox(USER).watch).toBeDefined();
    serve.child.kill('SIGTERM');
    expect((await serve.exit).code).toBe(0);
    // Stopped while it still held the mailbox: the watch ended with it (users.stop).
    expect(standIn.mailbox(USER).watch).toBeUndefined();
  }, 120_000);
});
