/**
 * Shared set-up of the `mailgate serve` + Graph tests: a configuration file pointing at the
 * Graph stand-in (in this process) and an emulator, a free port for the server (the
 * notification URL must be known before it listens), and what the service reports.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { StartedEmulator } from '../support/emulator.js';

export const ADMIN_KEY = 'admin-key-0123456789abcdef';
export const CLIENT_STATE = 'client-state-0123456789abcdef';
const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export interface GraphConfigExtra {
  /** Port of the public listener (the notification URL's). */
  port?: number;
  /** Fields of the graph entry, as YAML flow text. */
  entry?: string;
  notifications?: boolean;
  delivery?: string;
  /** The store URL (default: SQLite in the test directory). */
  store?: string;
  /** Where Graph posts notifications (default: this replica's public listener). */
  notificationUrl?: string;
}

export function writeGraphConfig(
  dir: string,
  name: string,
  standIn: GraphStandIn,
  emu: StartedEmulator,
  users: string[],
  extra: GraphConfigExtra = {},
): string {
  const file = join(dir, `${name}.yaml`);
  const port = extra.port ?? 0;
  const notifications = extra.notifications
    ? `, notifications: { url: "${extra.notificationUrl ?? `http://127.0.0.1:${port}/graph/m365/notifications`}", client_state: "${CLIENT_STATE}" }`
    : '';
  writeFileSync(
    file,
    [
      `store: ${extra.store ?? `sqlite:${join(dir, name, 'mailgate.db')}`}`,
      `api: { url: ${emu.url}, token: "\${TEST_API_TOKEN}", retry: { base_delay_ms: 50, max_delay_ms: 200 } }`,
      // The notification receiver is reached on the public listener, as Graph would reach it.
      `server: { listen: 127.0.0.1:0, ${extra.notifications ? `public_listen: 127.0.0.1:${port}, ` : ''}api_keys: ["\${TEST_ADMIN_KEY}"] }`,
      'log_level: info',
      `delivery: ${extra.delivery ?? '{ max_documents: 500, flush_ms: 0 }'}`,
      'routes:',
      '  - { name: support, source: acme/support, user_properties: { "string:Mailbox": "{mailbox}", "string:Folder": "{folder}" } }',
      'adapters:',
      '  graph:',
      `    - { name: m365, route: support, tenant_id: ${standIn.tenantId}, client_id: ${CLIENT_ID}, auth: { client_secret: "\${GRAPH_SECRET}" }, ` +
        `authority_url: "${standIn.url}", graph_url: "${standIn.graphUrl}", mailboxes: [${users.map((u) => `{ user: "${u}" }`).join(', ')}]` +
        `${notifications}${extra.entry ? `, ${extra.entry}` : ''} }`,
      '',
    ].join('\n'),
  );
  return file;
}

export function graphEnv(emu: StartedEmulator): Record<string, string> {
  return { TEST_API_TOKEN: emu.token, TEST_ADMIN_KEY: ADMIN_KEY, GRAPH_SECRET: 'stand-in-secret' };
}

export interface GraphStatusLine {
  name: string;
  state: string;
  healthy: boolean;
  lastError?: { code: string; message: string } | null;
  failures: number;
  messages: number;
}

/** The Graph mailboxes of /api/status. */
export async function graphStatus(url: string): Promise<GraphStatusLine[]> {
  const res = await fetch(`${url}/api/status`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const status = (await res.json()) as { adapters: Array<{ kind: string }> };
  return status.adapters.filter((a) => a.kind === 'graph') as never;
}
