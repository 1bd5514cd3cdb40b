/**
 * SIGKILL of a spawned `mailgate serve` in the middle of an SMTP DATA transfer: the message that
 * got its 250 before is delivered after a restart, the one cut mid-DATA (no answer) is stored
 * nowhere, so its sender's retry is the only copy.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { textMessage } from '../imap/messages.js';
import { eventually, killLeftovers, spawnServe, type ServeProcess } from '../service/serve-process.js';
import { startEmulator } from '../support/emulator.js';
import { RawClient } from './client.js';

const dirs: string[] = [];
afterAll(() => {
  killLeftovers();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

async function smtpPort(serve: ServeProcess): Promise<number> {
  let port = 0;
  await eventually(
    () => {
      port = Number(/SMTP listening on [^"]*:(\d+)/.exec(serve.stdout() + serve.stderr())?.[1] ?? 0);
      return port > 0;
    },
    'the SMTP listener',
    30_000,
  ).catch((err: Error) => Promise.reject(new Error(`${err.message}\n${serve.stderr()}`)));
  return port;
}

const send = (port: number, raw: string) =>
  nodemailer
    .createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true } as never)
    .sendMail({ envelope: { from: 'a@example.org', to: ['support@example.com'] }, raw });

describe('mailgate serve killed mid-DATA', () => {
  it('keeps what got a 250 and stores nothing of the message cut short', async () => {
    const emu = await startEmulator({ autoCreateSources: true });
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-smtp-kill-'));
    dirs.push(dir);
    const config = join(dir, 'mailgate.json');
    writeFileSync(
      config,
      JSON.stringify({
        store: `sqlite:${join(dir, 'mailgate.db')}`,
        api: { url: emu.url, token: emu.token },
        server: { listen: '127.0.0.1:0' },
        delivery: { flush_ms: 0 },
        routes: [{ name: 'support', source: 'acme/support' }],
        adapters: { smtp: [{ name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: 'support@example.com' }] }] },
        log_level: 'info',
      }),
    );
    try {
      // The API answers 503: what got its 250 is only in the outbox when the process dies.
      emu.emulator.setFaults([{ endpoint: 'sync-raw-emails', status: 503 }]);
      const first = spawnServe(['--config', config, '--lease-ms', '2000'], { cwd: dir });
      const port = await smtpPort(first);
      expect((await send(port, textMessage(1))).response).toMatch(/^250 /);

      const c = (await RawClient.open(port)).client;
      expect((await c.cmd('EHLO client.example.org')).code).toBe(250);
      expect((await c.cmd('MAIL FROM:<a@example.org>')).code).toBe(250);
      expect((await c.cmd('RCPT TO:<support@example.com>')).code).toBe(250);
      expect((await c.cmd('DATA')).code).toBe(354);
      c.write(textMessage(2));
      const chunk = Buffer.from(`${'z'.repeat(1022)}\r\n`.repeat(64));
      for (let i = 0; i < 64; i++) if (!c.write(chunk)) await c.drained();
      first.child.kill('SIGKILL');
      expect(await first.exit).toEqual({ code: null, signal: 'SIGKILL' });
      await expect(c.next()).rejects.toThrow('connection closed');

      // What got its 250 is in the outbox with its exact bytes and the envelope beside them.
      const killed = new Database(join(dir, 'mailgate.db'), { readonly: true });
      try {
        const rows = killed.prepare('SELECT o.origin, r.raw FROM outbox o JOIN outbox_raw r ON r.id = o.id').all() as Array<{
          origin: string;
          raw: Buffer;
        }>;
        expect(rows).toHaveLength(1);
        expect(rows[0]!.raw.equals(Buffer.from(textMessage(1)))).toBe(true);
        expect(JSON.parse(rows[0]!.origin)).toMatchObject({
          adapter: 'smtp',
          instance: 'mx',
          envelope: { provider: 'smtp', from: 'a@example.org', to: ['support@example.com'], remoteAddress: '127.0.0.1', tls: false },
        });
      } finally {
        killed.close();
      }

      emu.emulator.setFaults([]);
      const second = spawnServe(['--config', config, '--lease-ms', '2000'], { cwd: dir });
      await smtpPort(second);
      await eventually(() => emu.emulator.stats().comments === 1, 'the message that got its 250');
      second.child.kill('SIGTERM');
      await second.exit;
      const db = new Database(join(dir, 'mailgate.db'), { readonly: true });
      try {
        expect(db.prepare('SELECT count(*) AS n FROM outbox').get()).toEqual({ n: 1 });
      } finally {
        db.close();
      }
      expect(emu.emulator.stats().comments).toBe(1);
    } finally {
      await emu.stop();
    }
  }, 120_000);
});
