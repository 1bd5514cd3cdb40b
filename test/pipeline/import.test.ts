/** `mailgate import`, `status` and `dlq` against a real emulator over HTTP and real SQLite. */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { ConfigSchema } from '../../src/config/schema.js';
import { importPool, ROOT } from '../cli/support/dist.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { writeMbox } from '../crash/support.js';
import { mailgate, mailgateOnTerminal } from './cli-io.js';
import { fileOrigin } from '../../adapters/files/identity.js';

let dir: string;
let emu: StartedEmulator;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-import-'));
  emu = await startEmulator({ autoCreateSources: true });
});
afterAll(async () => {
  await emu.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The comment id mailgate derives for the first message of an mbox written by writeMbox. */
async function commentIdOf(mbox: string): Promise<string | undefined> {
  const line = (await mailgate('preview', '--format', 'jsonl', mbox)).stdout.split('\n')[0]!;
  return (JSON.parse(line) as { comment: { id: string } }).comment.id;
}

const syncRequests = () => Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);

function api(store: string, source: string): string[] {
  return ['--api-url', emu.url, '--token', emu.token, '--source', source, '--store', `sqlite:${join(dir, store)}`, '--workers', '1'];
}

describe('mailgate import', () => {
  it('delivers every message, and a second run sends nothing', async () => {
    const mbox = join(dir, 'a.mbox');
    writeMbox(mbox, 120, 'twice');
    const before = emu.emulator.stats().ai_units;
    const first = await mailgate('import', '--yes', mbox, ...api('twice.db', 'acme/twice'), '--json');
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout) as Record<string, number>;
    expect(summary).toMatchObject({
      read: 120,
      parsed: 120,
      queued: 120,
      delivered: 120,
      deadLettered: 0,
      aiUnits: 120,
      aiUnitsEstimated: 120,
    });
    expect(emu.emulator.stats().ai_units - before).toBe(120);
    const requests = syncRequests();
    const second = await mailgate('import', '--yes', mbox, ...api('twice.db', 'acme/twice'), '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ queued: 0, delivered: 0, aiUnits: 0 });
    expect(syncRequests()).toBe(requests);
    expect(emu.emulator.stats().ai_units - before).toBe(120);
  });

  it('draws a progress bar beside every counter on a terminal, ending with the final figures, and clears it', async () => {
    const mbox = join(dir, 'tty.mbox');
    writeMbox(mbox, 25, 'tty');
    const run = await mailgateOnTerminal('import', '--yes', mbox, ...api('tty.db', 'acme/tty'));
    expect(run.code, run.stderr).toBe(0);
    const drawn = run.stderr
      .split('\r\x1b[2K')
      .slice(1)
      .map((l) => l.split('\n')[0]!)
      .filter((l) => l !== '' && !l.startsWith('import into route'));
    expect(drawn.length).toBeGreaterThan(0);
    // AI units first, then the counters that are not 0: the line fits 160 columns (once cut before the AI units).
    const counters = /\| {2}AI units \d+ · read \d+( · [a-z ]+ \d+)*$/;
    const bar = /^(\[[█░]{20}\] +\d{1,3}% {2}.+ msg\/s {2}.+\/s {2}ETA [-:\d]+|measuring input… {2}.+\/s) {2}\| {2}/;
    for (const l of drawn) {
      expect(l).toMatch(bar);
      expect(l).toMatch(counters);
    }
    expect(drawn.at(-1)).toMatch(/^\[█{20}\] 100% {2}/);
    expect(drawn.at(-1)).toMatch(/ {2}\| {2}AI units 25 · read 25 · parsed 25 · queued 25 · delivered 25$/);
    for (const l of drawn) expect(l.length, l).toBeLessThan(160);
    // Cleared before the summary: the summary line starts on an empty line of its own.
    // eslint-disable-next-line no-control-regex
    expect(run.stderr).toMatch(/\r\x1b\[2Kimport into route import: read 25 /);
  });

  it('a dry run reports the cost, then sends and stores nothing', async () => {
    const mbox = join(dir, 'dry.mbox');
    writeMbox(mbox, 40, 'dry');
    const requests = syncRequests();
    const dry = await mailgate('import', '--yes', mbox, ...api('dry.db', 'acme/dry'), '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      dryRun: true,
      read: 40,
      parsed: 40,
      delivered: 0,
      queued: 40,
      unchanged: 0,
      aiUnits: 40,
    });
    // In words: a dry run queues nothing, it says what it would send (once "queued 40").
    const words = await mailgate('import', '--yes', mbox, ...api('dry.db', 'acme/dry'), '--dry-run');
    expect(words.stdout + words.stderr).toMatch(
      /dry run \(nothing sent, nothing stored\): read 40 {2}parsed 40 {2}would send 40 .*AI units 40 \(estimated\)/,
    );
    expect(words.stdout + words.stderr).not.toMatch(/queued \d/);
    expect(syncRequests()).toBe(requests);
    const status = await mailgate('status', '--store', `sqlite:${join(dir, 'dry.db')}`, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ outboxDepth: 0, routes: [], checkpoints: [] });
    // The real run afterwards sends everything; a dry run after it finds nothing to send.
    const real = await mailgate('import', '--yes', mbox, ...api('dry.db', 'acme/dry'), '--json');
    expect(JSON.parse(real.stdout)).toMatchObject({ delivered: 40, aiUnits: 40 });
    const again = await mailgate('import', '--yes', mbox, ...api('dry.db', 'acme/dry'), '--dry-run', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 40, queued: 0, aiUnits: 0 });
  });

  it('dead-letters an unparseable message: exit 1, dlq list/show/replay/purge, status', async () => {
    writeMbox(join(dir, 'good.mbox'), 3, 'dlq');
    writeFileSync(join(dir, 'bad.eml'), 'this is not an email at all\n');
    const store = `sqlite:${join(dir, 'dlq.db')}`;
    const run = await mailgate('import', '--yes', join(dir, 'good.mbox'), join(dir, 'bad.eml'), ...api('dlq.db', 'acme/dlq'), '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ delivered: 3, deadLettered: 1 });
    const list = await mailgate('dlq', 'list', '--store', store, '--json');
    const dead = JSON.parse(list.stdout) as Array<{ id: number; error: { code: string } }>;
    expect(dead).toHaveLength(1);
    expect(dead[0]!.error.code).toMatch(/^MAILGATE_ERR_MIME_/);
    const show = await mailgate('dlq', 'show', String(dead[0]!.id), '--store', store, '--json');
    expect(JSON.parse(show.stdout)).toMatchObject({ id: dead[0]!.id, hasRaw: true });
    const raw = await mailgate('dlq', 'show', String(dead[0]!.id), '--store', store, '--raw');
    expect(raw.stdout).toBe('this is not an email at all\n');
    // Replaying with the same code keeps it dead (exit 1); purging removes it.
    const replay = await mailgate('dlq', 'replay', String(dead[0]!.id), ...api('dlq.db', 'acme/dlq').slice(0, -2), '--json');
    expect(replay.code).toBe(1);
    expect(JSON.parse(replay.stdout)).toMatchObject({ requeued: 0, stillDead: 1 });
    const status = await mailgate('status', '--store', store, '--json');
    expect(JSON.parse(status.stdout).routes[0]).toMatchObject({ route: 'import', delivered: 3, aiUnits: 3 });
    const text = await mailgate('status', '--store', store);
    expect(text.stdout).toContain('import: enqueued');
    const purge = await mailgate('dlq', 'purge', '--all', '--yes', '--store', store, '--json');
    expect(JSON.parse(purge.stdout)).toEqual({ purged: 1 });
  });

  it('imports the same file into a second source: sent there, the first source not billed again', async () => {
    const mbox = join(dir, 'two.mbox');
    writeMbox(mbox, 30, 'two-sources');
    const first = await mailgate('import', '--yes', mbox, ...api('two.db', 'acme/first'), '--json');
    expect(JSON.parse(first.stdout)).toMatchObject({ delivered: 30, aiUnits: 30 });
    const before = emu.emulator.stats();
    const second = await mailgate('import', '--yes', mbox, ...api('two.db', 'acme/second'), '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ read: 30, queued: 30, delivered: 30, aiUnits: 30 });
    expect(emu.emulator.stats().comments - before.comments).toBe(30);
    const id = await commentIdOf(mbox);
    expect(
      (await fetch(`${emu.url}/api/v1/sources/acme/second/comments/${id}`, { headers: { authorization: `Bearer ${emu.token}` } })).status,
    ).toBe(200);
    const again = await mailgate('import', '--yes', mbox, ...api('two.db', 'acme/first'), '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ queued: 0, delivered: 0, aiUnits: 0 });
  });

  it('reads mail added to an imported directory, also when it sorts before what was read', async () => {
    const inbox = join(dir, 'inbox');
    mkdirSync(inbox);
    const mail = (n: string) =>
      `From: a@example.com\nTo: b@example.com\nSubject: ${n}\nMessage-ID: <added-${n}@example.com>\nDate: Mon, 1 Jan 2024 00:00:00 +0000\n\nbody ${n}\n`;
    writeFileSync(join(inbox, 'm.eml'), mail('m'));
    const first = await mailgate('import', '--yes', inbox, ...api('added.db', 'acme/added'), '--json');
    expect(JSON.parse(first.stdout)).toMatchObject({ delivered: 1 });
    writeFileSync(join(inbox, 'a.eml'), mail('a'));
    writeFileSync(join(inbox, 'z.eml'), mail('z'));
    const second = await mailgate('import', '--yes', inbox, ...api('added.db', 'acme/added'), '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ read: 2, parsed: 2, queued: 2, duplicates: 0, delivered: 2, aiUnits: 2 });
    writeFileSync(join(inbox, 'b.eml'), mail('b'));
    const third = await mailgate('import', '--yes', inbox, ...api('added.db', 'acme/added'), '--json');
    // a.eml and m.eml are read again but known: not parsed, not sent; z.eml, where the last run stopped, is done.
    expect(JSON.parse(third.stdout)).toMatchObject({ read: 3, parsed: 1, queued: 1, duplicates: 2, delivered: 1, aiUnits: 1 });
  });

  it('stops at once when the API refuses the credentials: exit 1, the reason named, the messages kept for the next run', async () => {
    const mbox = join(dir, 'refused.mbox');
    writeMbox(mbox, 12, 'refused');
    const store = `sqlite:${join(dir, 'refused.db')}`;
    const started = Date.now();
    const run = await mailgate(
      'import',
      '--yes',
      mbox,
      '--api-url',
      emu.url,
      '--token',
      'not-the-token',
      '--source',
      'acme/refused',
      '--store',
      store,
      '--workers',
      '1',
      '--json',
    );
    expect(run.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.stderr).toMatch(/MAILGATE_ERR_API_UNAUTHORIZED: the API refused route import \(acme\/refused\)/);
    expect(JSON.parse(run.stdout)).toMatchObject({ delivered: 0, error: { code: 'MAILGATE_ERR_API_UNAUTHORIZED' } });
    const status = await mailgate('status', '--store', store, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ outboxDepth: 12 });
    const retry = await mailgate('import', '--yes', mbox, ...api('refused.db', 'acme/refused'), '--json');
    expect(retry.code, retry.stderr).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ delivered: 12, aiUnits: 12 });
  });

  it('stops when the API refuses the request itself (an unknown transform tag): nothing dead-lettered, a few requests', async () => {
    const mbox = join(dir, 'tag.mbox');
    writeMbox(mbox, 300, 'tag');
    const requests = syncRequests();
    const run = await mailgate('import', '--yes', mbox, ...api('tag.db', 'acme/tag'), '--transform-tag', 'bogus.0.XXXXXXXX', '--json');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/MAILGATE_ERR_API_REQUEST_REJECTED: the API refused route import \(acme\/tag\)/);
    expect(JSON.parse(run.stdout)).toMatchObject({ deadLettered: 0, delivered: 0, error: { code: 'MAILGATE_ERR_API_REQUEST_REJECTED' } });
    // Each delivery in flight (delivery.concurrency: 2) proves the refusal request-level in at
    // most 4 requests (docs/delivery.md), instead of bisecting its batch document by document.
    expect(syncRequests() - requests).toBeLessThanOrEqual(8);
    const fixed = await mailgate('import', '--yes', mbox, ...api('tag.db', 'acme/tag'), '--json');
    expect(JSON.parse(fixed.stdout)).toMatchObject({ delivered: 300, deadLettered: 0 });
  });

  it('keeps an unreadable file as a dead letter with its bytes, reported once', async () => {
    const inbox = join(dir, 'corrupt');
    mkdirSync(inbox);
    const bogus = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(600, 7)]);
    writeFileSync(join(inbox, 'broken.msg'), bogus);
    const store = `sqlite:${join(dir, 'corrupt.db')}`;
    const run = await mailgate('import', '--yes', inbox, ...api('corrupt.db', 'acme/corrupt'), '--json');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/broken\.msg: MAILGATE_ERR_INPUT_MSG_INVALID: .*\(kept as a dead letter\)/);
    expect(JSON.parse(run.stdout)).toMatchObject({ read: 1, unreadable: 1, deadLettered: 1 });
    const dead = JSON.parse((await mailgate('dlq', 'list', '--store', store, '--json')).stdout) as Array<{
      id: number;
      error: { code: string };
    }>;
    expect(dead.map((d) => d.error.code)).toEqual(['MAILGATE_ERR_INPUT_MSG_INVALID']);
    const show = await mailgate('dlq', 'show', String(dead[0]!.id), '--store', store, '--json');
    expect(JSON.parse(show.stdout)).toMatchObject({ hasRaw: true });
    const again = await mailgate('import', '--yes', inbox, ...api('corrupt.db', 'acme/corrupt'), '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ read: 0, deadLettered: 0 });
    expect(JSON.parse((await mailgate('dlq', 'list', '--store', store, '--json')).stdout)).toHaveLength(1);
  });

  it('replays a dead letter with the current configuration: re-parsed from its bytes, queued, delivered', async () => {
    // Intake with a 100-byte budget dead-letters a bigger message, keeping its bytes.
    // The compiled modules throughout: the pool's errors must be intake's own error class.
    const dist = (path: string) => import(pathToFileURL(join(ROOT, 'dist', path)).href);
    const { openStore } = (await dist('src/store/index.js')) as typeof import('../../src/store/index.js');
    const { createIntake } = (await dist('src/pipeline/intake.js')) as typeof import('../../src/pipeline/intake.js');
    const store = await openStore(`sqlite:${join(dir, 'replay.db')}`);
    const { ParsePool } = await importPool();
    const pool = new ParsePool({ size: 1, maxMessageBytes: 100 });
    const config = ConfigSchema.parse({ routes: [{ name: 'import', source: 'acme/replay' }] });
    try {
      const intake = createIntake({
        store,
        routes: new Map([['import', config.routes[0]!]]),
        parse: (raw, o) => pool.parseEncoded(raw, o),
        parsing: { maxMessageBytes: 100 },
        maxOutbox: 100,
      });
      const raw = Buffer.from(
        'From: a@example.com\r\nTo: b@example.com\r\nSubject: over budget\r\nMessage-ID: <replay-1@example.com>\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\nThis body is over the budget.\r\n',
      );
      await intake.accept([
        {
          raw,
          key: 'files:/in/replay.eml:0',
          origin: fileOrigin('/in/replay.eml', 0),
          route: 'import',
          receivedAt: new Date(),
        },
      ]);
    } finally {
      await pool.close();
      await store.close();
    }
    const dbStore = `sqlite:${join(dir, 'replay.db')}`;
    const dead = JSON.parse((await mailgate('dlq', 'list', '--store', dbStore, '--json')).stdout) as Array<{
      id: number;
      error: { code: string };
    }>;
    expect(dead.map((d) => d.error.code)).toEqual(['MAILGATE_ERR_MIME_TOO_LARGE']);
    const before = emu.emulator.stats().ai_units;
    // The same route with today's (default) budget: the message parses and goes out.
    const replayed = await mailgate('dlq', 'replay', String(dead[0]!.id), ...api('replay.db', 'acme/replay').slice(0, -2), '--json');
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ requeued: 1, stillDead: 0 });
    expect(emu.emulator.stats().ai_units - before).toBe(1);
    expect(JSON.parse((await mailgate('dlq', 'list', '--store', dbStore, '--json')).stdout)).toEqual([]);
  });

  it('refuses a missing input before anything starts', async () => {
    const run = mailgate('import', '--yes', join(dir, 'no-such.mbox'), ...api('missing.db', 'acme/missing'));
    await expect(run).rejects.toThrow(/MAILGATE_ERR_INPUT_NOT_FOUND|no such file/);
  });

  it('missing route flags are a usage error: exit 2 before anything starts', async () => {
    const run = await mailgate('import', '--yes', dir, '--store', `sqlite:${join(dir, 'x.db')}`);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/MAILGATE_ERR_CLI_USAGE: .*--source/);
    expect(existsSync(join(dir, 'x.db'))).toBe(false);
  });
});
