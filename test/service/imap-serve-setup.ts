/**
 * Shared set-up of the `mailgate serve` + IMAP tests: a mailbox on the test Dovecot, a
 * configuration file pointing at it (or at a proxy in front of it) and an emulator, and
 * what the service and the emulator report.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DovecotServer } from '../support/dovecot.js';
import type { StartedEmulator } from '../support/emulator.js';
import { textMessage } from '../imap/messages.js';

export const ADMIN_KEY = 'admin-key-0123456789abcdef';

let userSeq = 0;

/** A user with `count` messages in INBOX (written straight into the maildir) and a `Done` folder. */
export async function mailbox(
  dovecot: DovecotServer,
  count: number,
  extra: Array<string | Buffer> = [],
  body: (i: number, user: string) => string = (i, user) => textMessage(i, `serve ${user} ${i}`),
): Promise<{ user: string; pass: string }> {
  const user = `serve${process.pid}x${userSeq++}`;
  const pass = `pw-${user}`;
  await dovecot.addUser(user, pass);
  dovecot.fillMaildir(user, 'INBOX', [...Array.from({ length: count }, (_, i) => body(i + 1, user)), ...extra]);
  await dovecot.createFolder(user, 'Done');
  return { user, pass };
}

export interface ServeConfigExtra {
  after_delivery?: string;
  batch_size?: number;
  /** IMAP port (a proxy in front of Dovecot); default Dovecot's. */
  port?: number;
  folders?: string[];
  /** More fields of the account, as YAML flow text, e.g. `idle_watchdog_ms: 1000`. */
  account?: string;
  /** The `delivery:` mapping, as YAML flow text. */
  delivery?: string;
}

export function writeConfig(
  dir: string,
  name: string,
  dovecot: DovecotServer,
  emu: StartedEmulator,
  user: string,
  extra: ServeConfigExtra = {},
): string {
  const file = join(dir, `${name}.yaml`);
  const more = extra.account ? `, ${extra.account}` : '';
  writeFileSync(
    file,
    [
      `store: sqlite:${join(dir, name, 'mailgate.db')}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      `server: { listen: 127.0.0.1:0, api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      `delivery: ${extra.delivery ?? '{ max_documents: 40, flush_ms: 0 }'}`,
      'routes:',
      '  - { name: support, source: acme/support, user_properties: { "string:Mailbox": "{account}" } }',
      'adapters:',
      '  imap:',
      `    - { name: ${user}, route: support, host: ${dovecot.host}, port: ${extra.port ?? dovecot.port}, secure: false, auth: { user: ${user}, pass: "\${TEST_IMAP_PASS}" }, folders: [${(extra.folders ?? ['INBOX']).join(', ')}], after_delivery: "${extra.after_delivery ?? 'none'}", batch_size: ${extra.batch_size ?? 100}${more} }`,
      '',
    ].join('\n'),
  );
  return file;
}

export function serveEnv(emu: StartedEmulator, pass: string): Record<string, string> {
  return { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, TEST_IMAP_PASS: pass };
}

export async function countIn(dovecot: DovecotServer, user: string, folder: string): Promise<number> {
  return dovecot.withClient(user, async (c) => {
    const st = await c.status(folder, { messages: true });
    return st ? (st.messages ?? 0) : 0;
  });
}

/** UIDs of the messages in `folder` without `\Seen`. */
export async function unseen(dovecot: DovecotServer, user: string, folder: string): Promise<number[]> {
  return dovecot.withClient(user, async (c) => {
    await c.mailboxOpen(folder, { readOnly: true });
    return (await c.search({ seen: false }, { uid: true })) || [];
  });
}

/** One sample of a Prometheus text, e.g. `mailgate_messages_received_total{route="support",adapter="imap"}`; 0 when absent. */
export function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

export async function metrics(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}

/** The IMAP accounts of /api/status. */
export async function imapStatus(
  url: string,
): Promise<Array<{ name: string; state: string; failures: number; messages: number; lastError: { code: string } | null }>> {
  const status = (await (await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).json()) as {
    adapters: Array<{ kind: string }>;
  };
  return status.adapters.filter((a) => a.kind === 'imap') as never;
}
