/** Shared helpers for the IMAP adapter tests. */
import { createServer } from 'node:net';
import { ImapAdapter, type ImapAdapterOptions } from '../../adapters/imap/index.js';
import type { DovecotServer } from '../support/dovecot.js';
import type { MemorySink } from './memory-sink.js';

let userSeq = 0;

/** A fresh mailbox user on the server. */
export async function newUser(server: DovecotServer): Promise<{ user: string; pass: string }> {
  const user = `user${process.pid}x${userSeq++}`;
  const pass = `pw-${user}`;
  await server.addUser(user, pass);
  return { user, pass };
}

export function account(server: DovecotServer, user: string, pass: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: user,
    route: 'support',
    host: server.host,
    port: server.port,
    secure: false,
    auth: { user, pass },
    folders: ['INBOX'],
    ...extra,
  };
}

/** Starts the adapter on the sink; `stop()` aborts it and waits for it to finish. */
export function run(
  accounts: unknown[],
  sink: MemorySink,
  opts: ImapAdapterOptions = {},
): { adapter: ImapAdapter; stop: () => Promise<void>; done: Promise<void> } {
  // 0.5: transient waits of half the base (full jitter), throttle and auth waits of three quarters.
  const adapter = new ImapAdapter(accounts, { random: () => 0.5, ...opts });
  const ctl = new AbortController();
  const done = adapter.start(sink, ctl.signal);
  return {
    adapter,
    done,
    stop: async () => {
      ctl.abort();
      await done;
    },
  };
}

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
