/**
 * Shared set-up of the `mailgate serve` + Gmail tests: the stand-in's key file, a configuration
 * file pointing at the stand-in (in this process) and an emulator, and what the service reports.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import type { StartedEmulator } from '../support/emulator.js';

export const ADMIN_KEY = 'admin-key-0123456789abcdef';
export const AUDIENCE = 'https://mailgate.example.test/gmail/workspace/push';
export const PUSHER = 'pubsub-push@stand-in-project.iam.gserviceaccount.com';

export interface GmailConfigExtra {
  /** Port of the public listener (the push endpoint's); with it, users.watch and push are configured. */
  pushPort?: number;
  /** Fields of the gmail entry, as YAML flow text. */
  entry?: string;
  delivery?: string;
  /** The store URL (default: SQLite in the test directory). */
  store?: string;
}

export function writeGmailConfig(
  dir: string,
  name: string,
  standIn: GmailStandIn,
  emu: StartedEmulator,
  users: string[],
  extra: GmailConfigExtra = {},
): string {
  const key = join(dir, `${name}-sa-key.json`);
  writeFileSync(key, JSON.stringify(standIn.keyFile()));
  const file = join(dir, `${name}.yaml`);
  const notifications =
    extra.pushPort === undefined
      ? ''
      : `, notifications: { topic: projects/stand-in-project/topics/gmail, audience: "${AUDIENCE}", service_account: "${PUSHER}", certs_url: "${standIn.certsUrl}" }`;
  if (extra.pushPort !== undefined)
    standIn.pubsub.target = {
      endpoint: `http://127.0.0.1:${extra.pushPort}/gmail/workspace/push`,
      audience: AUDIENCE,
      serviceAccount: PUSHER,
    };
  writeFileSync(
    file,
    [
      `store: ${extra.store ?? `sqlite:${join(dir, name, 'mailgate.db')}`}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      `server: { listen: 127.0.0.1:0, ${extra.pushPort === undefined ? '' : `public_listen: 127.0.0.1:${extra.pushPort}, `}api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      `delivery: ${extra.delivery ?? '{ max_documents: 500, flush_ms: 0 }'}`,
      'routes:',
      '  - { name: support, source: acme/support, user_properties: { "string:Mailbox": "{mailbox}", "string:Labels": "{labels}" } }',
      'adapters:',
      '  gmail:',
      `    - { name: workspace, route: support, auth: { service_account: "${key}" }, api_url: "${standIn.url}", ` +
        `mailboxes: [${users.map((u) => `{ user: "${u}" }`).join(', ')}]${notifications}${extra.entry ? `, ${extra.entry}` : ''} }`,
      '',
    ].join('\n'),
  );
  return file;
}

export function gmailEnv(emu: StartedEmulator): Record<string, string> {
  return { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY };
}

export interface GmailStatusLine {
  name: string;
  state: string;
  healthy: boolean;
  lastError?: { code: string; message: string } | null;
  failures: number;
  messages: number;
}

/** The Gmail mailboxes of /api/status. */
export async function gmailStatus(url: string): Promise<GmailStatusLine[]> {
  const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const status = (await res.json()) as { adapters: Array<{ kind: string }> };
  return status.adapters.filter((a) => a.kind === 'gmail') as never;
}
