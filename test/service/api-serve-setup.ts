/**
 * What the `mailgate serve` tests of the API mailbox kinds (Graph, Gmail) share: a configuration
 * file around one entry of the kind (a stand-in in this process, an emulator), a free port for
 * the public listener (a notification URL must be known before the server listens), and the
 * kind's lines of /api/status.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { StartedEmulator } from '../support/emulator.js';

export const ADMIN_KEY = 'admin-key-0123456789abcdef';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A mailbox of the entry: its address, or its address with more fields (YAML flow text). */
export type MailboxSpec = string | { user: string; fields: string };

export const mailboxList = (users: readonly MailboxSpec[]): string =>
  `[${users.map((u) => (typeof u === 'string' ? `{ user: "${u}" }` : `{ user: "${u.user}", ${u.fields} }`)).join(', ')}]`;

export interface ServeConfig {
  /** The store URL (default: SQLite in the test directory). */
  store?: string;
  delivery?: string;
  /** Port of the public listener, where the provider's notifications arrive. */
  publicPort?: number;
  /** Top-level lines besides the usual ones (e.g. `mailboxes: { check_ms: 200 }`). */
  more?: string[];
}

/** Writes `<dir>/<name>.yaml`: the emulator as the API, one route `support` with `properties`, and `adapter` (the kind's lines). */
export function writeServeConfig(
  dir: string,
  name: string,
  emu: StartedEmulator,
  properties: string,
  adapter: string[],
  extra: ServeConfig = {},
): string {
  const file = join(dir, `${name}.yaml`);
  const publicListen = extra.publicPort === undefined ? '' : `public_listen: 127.0.0.1:${extra.publicPort}, `;
  writeFileSync(
    file,
    [
      `store: ${extra.store ?? `sqlite:${join(dir, name, 'mailgate.db')}`}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      // Notifications are reached on the public listener, as the provider would reach them.
      `server: { listen: 127.0.0.1:0, ${publicListen}api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      `delivery: ${extra.delivery ?? '{ max_documents: 500, flush_ms: 0 }'}`,
      ...(extra.more ?? []),
      'routes:',
      `  - { name: support, source: acme/support, user_properties: { ${properties} } }`,
      'adapters:',
      ...adapter,
      '',
    ].join('\n'),
  );
  return file;
}

export const serveEnv = (emu: StartedEmulator, more: Record<string, string> = {}): Record<string, string> => ({
  TEST_API_TOKEN: emu.token,
  TEST_ADMIN_KEY: ADMIN_KEY,
  ...more,
});

export interface MailboxStatusLine {
  name: string;
  state: string;
  healthy: boolean;
  lastError?: { code: string; message: string } | null;
  failures: number;
  messages: number;
}

/** The adapters of `kind` in /api/status. */
export async function kindStatus(url: string, kind: string, signal?: AbortSignal): Promise<MailboxStatusLine[]> {
  const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` }, ...(signal ? { signal } : {}) });
  const status = (await res.json()) as { adapters: Array<{ kind: string }> };
  return status.adapters.filter((a) => a.kind === kind) as never;
}

export interface MailboxView {
  mailbox: string;
  state: string;
  reason: string | null;
  errorKind: string | null;
  byCommand: boolean;
  filtered: number;
  run: string | null;
  folders: Array<{ folder: string; state: string | null; lastSynced: string | null; behind: number | null; filtered: number }>;
}

/** GET /api/mailboxes. */
export async function mailboxViews(url: string): Promise<MailboxView[]> {
  const res = await fetch(`${url}/api/mailboxes`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return ((await res.json()) as { mailboxes: MailboxView[] }).mailboxes;
}
