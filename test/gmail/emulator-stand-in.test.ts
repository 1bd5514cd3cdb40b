/**
 * `mailgate emulator --stand-in gmail`: the Gmail kind offers its stand-in to the CLI, seeded
 * with sample mail; the entry it prints (its key file included) reads that mailbox with the real
 * adapter, and the stand-in stops with the emulator on SIGTERM, taking its key file with it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gmailEntrySchema } from '../../adapters/gmail/config.js';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { MAIN, requireBuild } from '../cli/support/dist.js';
import { MemorySink, quiet, until } from './setup.js';

describe('mailgate emulator --stand-in gmail', () => {
  it('runs the Gmail stand-in beside the emulator; the entry it prints reads its sample mailbox', async () => {
    requireBuild();
    const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', '--token', 't0k3n', '--stand-in', 'gmail'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let keyFile: string | undefined;
    try {
      await until(() => out.includes('mailgate emulator listening') && out.includes('mailboxes: [{'), 'the emulator to listen');
      expect(out).toMatch(/Gmail stand-in listening on http:\/\/127\.0\.0\.1:\d+: mailbox support@example\.test with 20 messages/);
      keyFile = /service_account: ([^ }]+)/.exec(out)?.[1];
      const entry = gmailEntrySchema.parse({
        name: 'standin',
        route: 'support',
        auth: { service_account: keyFile },
        api_url: /api_url: ([^,\s}]+)/.exec(out)?.[1],
        mailboxes: [{ user: /mailboxes: \[\{ user: ([^ }]+)/.exec(out)?.[1] }],
      });
      const sink = new MemorySink();
      const stop = new AbortController();
      const [adapter] = createGmailAdapters(entry, { logger: quiet });
      const done = adapter!.start(sink, stop.signal);
      await until(() => sink.items.size === 20, 'the sample mailbox read');
      stop.abort();
      await done;
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(keyFile !== undefined && existsSync(keyFile)).toBe(false);
  });
});
