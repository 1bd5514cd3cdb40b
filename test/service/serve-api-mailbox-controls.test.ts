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
import { sampleMessage as gmailMessage, startGmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { sampleMessage as graphMessage, startGraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { runMailgate } from '../cli/support/dist.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { mailboxViews, type MailboxSpec } from './api-serve-setup.js';
import { gmailEnv, writeGmailConfig } from './gmail-serve-setup.js';
import { graphEnv, writeGraphConfig } from './graph-serve-setup.js';
import { eventually, killLeftovers, spawnServe } from './serve-process.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-api-controls-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
afterEach(killLeftovers);

/** One kind as these cases need it: a stand-in with a failing and a working mailbox, new mail for the working one. */
interface Case {
  kind: string;
  instance: string;
  /** The failing mailbox's code and error kind. */
  code: string;
  errorKind: string;
  start(): Promise<{
    write(dir: string, name: string, emu: StartedEmulator, users: MailboxSpec[], more: string[], entry?: string): string;
    env(emu: StartedEmulator): Record<string, string>;
    /** Adds the failing mailbox `bad` and the working one `good` with `n` messages. */
    mailboxes(bad: string, good: string, n: number): void;
    /** Adds a working mailbox with `n` messages. */
    mailbox(user: string, n: number): void;
    deliver(user: string, from: number, n: number): void;
    close(): Promise<void>;
  }>;
}

const CASES: Case[] = [
  {
    kind: 'graph',
    instance: 'm365',
    code: 'MAILGATE_ERR_GRAPH_FORBIDDEN',
    errorKind: 'access_denied',
    async start() {
      const s = await startGraphStandIn();
      const deliver = (user: string, from: number, n: number) =>
        s.deliver(
          user,
          'inbox',
          Array.from({ length: n }, (_, i) => graphMessage(from + i, { mailbox: user, tag: 'controls' })),
        );
      const mailbox = (user: string, n: number) => {
        s.addMailbox(user);
        deliver(user, 0, n);
      };
      return {
        write: (d, name, emu, users, more, entry = 'poll_interval_ms: 1000') => writeGraphConfig(d, name, s, emu, users, { entry, more }),
        env: graphEnv,
        mailboxes(bad, good, n) {
          s.addMailbox(bad, { forbidden: true });
          mailbox(good, n);
        },
        mailbox,
        deliver,
        close: () => s.close(),
      };
    },
  },
  {
    kind: 'gmail',
    instance: 'workspace',
    code: 'MAILGATE_ERR_GMAIL_DELEGATION',
    errorKind: 'insufficient_scope',
    async start() {
      const s = await startGmailStandIn();
      const deliver = (user: string, from: number, n: number) =>
        s.deliver(
          user,
          Array.from({ length: n }, (_, i) => gmailMessage(from + i, { mailbox: user, tag: 'controls' })),
        );
      const mailbox = (user: string, n: number) => {
        s.addMailbox(user);
        deliver(user, 0, n);
      };
      return {
        write: (d, name, emu, users, more, entry = 'poll_interval_ms: 1000') => writeGmailConfig(d, name, s, emu, users, { entry, more }),
        env: gmailEnv,
        mailboxes(bad, good, n) {
          s.addMailbox(bad, { delegated: false });
          mailbox(good, n);
        },
        mailbox,
        deliver,
        close: () => s.close(),
      };
    },
  },
];

describe.each(CASES)('mailbox controls of $kind mailboxes through mailgate serve', (c) => {
  it('a mailbox failing longer than disable_after_ms is disabled (sync_error, its error kind) while its neighbour syncs', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const standIn = await c.start();
    try {
      const bad = 'failing@example.test';
      const good = 'working@example.test';
      standIn.mailboxes(bad, good, 5);
      const file = standIn.write(
        dir,
        `${c.kind}-disable`,
        emu,
        [{ user: bad, fields: 'disable_after_ms: 1000' }, good],
        ['mailboxes: { check_ms: 200 }'],
      );
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
        errorKind: c.errorKind,
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
      expect(listed.stdout).toContain(c.code);
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
      standIn.mailbox(user, 1000);
      const file = standIn.write(
        dir,
        `${c.kind}-behind`,
        emu,
        [user],
        ['mailboxes: { check_ms: 200 }'],
        'page_size: 10, poll_interval_ms: 60000',
      );
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
