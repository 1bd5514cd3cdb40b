/**
 * `mailgate emulator --stand-in graph`: the Graph kind offers its stand-in to the CLI, seeded
 * with sample mail; the entry it prints reads that mailbox with the real adapter (token, folders,
 * delta, content), and the stand-in stops with the emulator on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { graphEntrySchema } from '../../adapters/graph/config.js';
import { MAIN, requireBuild } from '../cli/support/dist.js';
import { MemorySink, quiet, until } from './setup.js';

describe('mailgate emulator --stand-in graph', () => {
  it('runs the Graph stand-in beside the emulator; the entry it prints reads its sample mailbox', async () => {
    requireBuild();
    const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', '--token', 't0k3n', '--stand-in', 'graph'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      await until(() => out.includes('mailgate emulator listening'), 'the emulator to listen');
      const field = (name: string) => new RegExp(`${name}: ([^,\\s}]+)`).exec(out)?.[1];
      const entry = graphEntrySchema.parse({
        name: 'standin',
        route: 'support',
        tenant_id: field('tenant_id'),
        client_id: field('client_id'),
        auth: { client_secret: field('client_secret') },
        authority_url: field('authority_url'),
        graph_url: field('graph_url'),
        mailboxes: [{ user: /mailboxes: \[\{ user: ([^ }]+)/.exec(out)?.[1] }],
      });
      expect(out).toMatch(/Graph stand-in listening on http:\/\/127\.0\.0\.1:\d+: mailbox support@contoso\.test with 20 messages/);
      const sink = new MemorySink();
      const stop = new AbortController();
      const [adapter] = createGraphAdapters(entry, { logger: quiet });
      const done = adapter!.start(sink, stop.signal);
      await until(() => sink.items.size === 20 && adapter!.health()[0]!.state === 'idle', 'the sample mailbox read');
      stop.abort();
      await done;
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('refuses a kind that offers no stand-in, naming those that do', async () => {
    requireBuild();
    const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', '--token', 't0k3n', '--stand-in', 'imap'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).not.toBe(0);
    expect(err).toMatch(/--stand-in imap: no adapter kind of that name offers a stand-in \(offered: gmail, graph\)/);
  });
});
