/**
 * Mailbox controls of the API mailbox kinds through `mailgate serve` (the built CLI as a child
 * process), their stand-ins (this process, over HTTP) and the API emulator: a mailbox that keeps
 * failing — Graph answering 403 for it, Gmail refusing its token (no delegation) — is disabled as
 * sync_error with its error kind once it has failed for its `disable_after_ms`, while its
 * neighbour keeps syncing; `mailgate mailboxes list` reads the state from the store. A first
 * round shows the folder's messages behind (the Mailboxes view reads them from the store).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runMailgate } from '../cli/support/dist.js';
import { startEmulator } from '../support/emulator.js';
import { API_KINDS } from './api-kinds.js';
import { mailboxViews } from './api-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-api-controls-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(killLeftovers);

describe.each(API_KINDS)('mailbox controls of $kind mailboxes through mailgate serve', (c) => {
  it('a mailbox failing longer than disable_after_ms is disabled (sync_error, its error kind) while its neighbour syncs', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const standIn = await c.start();
    try {
      const bad = 'failing@example.test';
      const good = 'working@example.test';
      standIn.addMailbox(bad, true);
      standIn.addMailbox(good);
      standIn.deliver(good, 0, 5);
      const file = standIn.write(dir, `${c.kind}-disable`, emu, [{ user: bad, fields: 'disable_after_ms: 1000' }, good], {
        entry: 'poll_interval_ms: 1000',
        more: ['mailboxes: { check_ms: 200 }'],
      });
      const serve = spawnServe(['--config', file], { cwd: dir, env: standIn.env(emu) });
      const url = await serve.url;
      await eventually(() => emu.emulator.stats().comments === 5, 'the working mailbox read');
      const badName = `${c.kind}:${c.instance}/${bad}`;
      const goodName = `${c.kind}:${c.instance}/${good}`;
      await eventually(
        async () => (await mailboxViews(url)).find((m) => m.mailbox === badName)?.state === 'disabled',
        'the failing mailbox disabled',
      );
      const views = await mailboxViews(url);
      expect(views.find((m) => m.mailbox === badName)).toMatchObject({
        state: 'disabled',
        reason: 'sync_error',
        errorKind: c.failing.errorKind,
        byCommand: false,
        run: 'disabled',
      });
      expect(views.find((m) => m.mailbox === goodName)).toMatchObject({ state: 'enabled', run: 'running' });
      // The neighbour carries on after the disable: new mail is read at its next poll.
      standIn.deliver(good, 100, 2);
      await eventually(() => emu.emulator.stats().comments === 7, 'new mail of the working mailbox read');
      expect(emu.emulator.stats().ai_units).toBe(7);
      const listed = await runMailgate(['mailboxes', 'list', '--store', `sqlite:${join(dir, `${c.kind}-disable`, 'mailgate.db')}`]);
      expect(listed.stdout).toContain(`${badName}: DISABLED (sync_error`);
      expect(listed.stdout).toContain(c.failing.code);
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await standIn.close();
      await emu.stop();
    }
  }, 120_000);

  it('shows the messages behind of a folder in a first round (status, the Mailboxes view), none once up to date', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const standIn = await c.start();
    try {
      const user = 'large@example.test';
      standIn.addMailbox(user);
      standIn.deliver(user, 0, 1000);
      const file = standIn.write(dir, `${c.kind}-behind`, emu, [user], {
        entry: 'page_size: 10, poll_interval_ms: 60000',
        more: ['mailboxes: { check_ms: 200 }'],
      });
      const serve = spawnServe(['--config', file], { cwd: dir, env: standIn.env(emu) });
      const url = await serve.url;
      const name = `${c.kind}:${c.instance}/${user}`;
      const folder = async () => (await mailboxViews(url)).find((m) => m.mailbox === name)?.folders[0];
      let seen: number | null | undefined;
      await eventually(async () => {
        const f = await folder();
        seen = f?.state === 'in_progress' ? f.behind : undefined;
        return typeof seen === 'number' && seen > 0 && seen < 1000;
      }, 'a figure below the folder total while the first round reads it');
      await eventually(() => emu.emulator.stats().comments === 1000, 'the 1000 delivered', 120_000);
      await eventually(async () => (await folder())?.state === 'up_to_date', 'up to date');
      expect((await folder())?.behind).toBeNull();
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      await standIn.close();
      await emu.stop();
    }
  }, 180_000);
});
