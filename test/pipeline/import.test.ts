/** `mailgate import`, `status` and `dlq` against a real emulator over HTTP and real SQLite. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { writeMbox } from '../crash/support.js';
import { mailgate } from './cli-io.js';

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

const syncRequests = () => Object.values(emu.emulator.stats().requests['sync-raw-emails'] ?? {}).reduce((a, b) => a + b, 0);

function api(store: string, source: string): string[] {
  return ['--api-url', emu.url, '--token', emu.token, '--source', source, '--store', `sqlite:${join(dir, store)}`, '--workers', '1'];
}

describe('mailgate import', () => {
  it('delivers every message, and a second run sends nothing', async () => {
    const mbox = join(dir, 'a.mbox');
    writeMbox(mbox, 120, 'twice');
    const before = emu.emulator.stats().ai_units;
    const first = await mailgate('import', mbox, ...api('twice.db', 'acme/twice'), '--json');
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout) as Record<string, number>;
    expect(summary).toMatchObject({ read: 120, parsed: 120, queued: 120, delivered: 120, deadLettered: 0, aiUnits: 120 });
    expect(emu.emulator.stats().ai_units - before).toBe(120);
    const requests = syncRequests();
    const second = await mailgate('import', mbox, ...api('twice.db', 'acme/twice'), '--json');
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ queued: 0, delivered: 0, aiUnits: 0 });
    expect(syncRequests()).toBe(requests);
    expect(emu.emulator.stats().ai_units - before).toBe(120);
  });

  it('a dry run reports the cost, then sends and stores nothing', async () => {
    const mbox = join(dir, 'dry.mbox');
    writeMbox(mbox, 40, 'dry');
    const requests = syncRequests();
    const dry = await mailgate('import', mbox, ...api('dry.db', 'acme/dry'), '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, read: 40, parsed: 40, delivered: 0, queued: 40, unchanged: 0, aiUnits: 40 });
    expect(syncRequests()).toBe(requests);
    const status = await mailgate('status', '--store', `sqlite:${join(dir, 'dry.db')}`, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ outboxDepth: 0, routes: [], checkpoints: [] });
    // The real run afterwards sends everything; a dry run after it finds nothing to send.
    const real = await mailgate('import', mbox, ...api('dry.db', 'acme/dry'), '--json');
    expect(JSON.parse(real.stdout)).toMatchObject({ delivered: 40, aiUnits: 40 });
    const again = await mailgate('import', mbox, ...api('dry.db', 'acme/dry'), '--dry-run', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ unchanged: 40, queued: 0, aiUnits: 0 });
  });

  it('dead-letters an unparseable message: exit 1, dlq list/show/replay/purge, status', async () => {
    const input = join(dir, 'bad');
    writeMbox(join(dir, 'good.mbox'), 3, 'dlq');
    writeFileSync(join(dir, 'bad.eml'), 'this is not an email at all\n');
    const store = `sqlite:${join(dir, 'dlq.db')}`;
    const run = await mailgate('import', join(dir, 'good.mbox'), join(dir, 'bad.eml'), ...api('dlq.db', 'acme/dlq'), '--json');
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
    const purge = await mailgate('dlq', 'purge', '--all', '--store', store, '--json');
    expect(JSON.parse(purge.stdout)).toEqual({ purged: 1 });
    expect(input).toBeTruthy();
  });

  it('a config error exits before anything starts', async () => {
    await expect(mailgate('import', dir, '--store', `sqlite:${join(dir, 'x.db')}`)).rejects.toThrow(/--source/);
  });
});
