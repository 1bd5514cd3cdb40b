/**
 * Set-up of the `mailgate serve` + Graph tests (the shared part: api-serve-setup.ts): a
 * configuration pointing at the Graph stand-in (in this process) and an emulator.
 */
import type { GraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { StartedEmulator } from '../support/emulator.js';
import {
  kindStatus,
  mailboxList,
  serveEnv,
  writeServeConfig,
  type MailboxSpec,
  type MailboxStatusLine,
  type ServeConfig,
} from './api-serve-setup.js';

export { ADMIN_KEY, freePort } from './api-serve-setup.js';
export const CLIENT_STATE = 'client-state-0123456789abcdef';
const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';

export interface GraphConfigExtra extends Omit<ServeConfig, 'publicPort'> {
  /** Port of the public listener (the notification URL's). */
  port?: number;
  /** Fields of the graph entry, as YAML flow text. */
  entry?: string;
  notifications?: boolean;
  /** Where Graph posts notifications (default: this replica's public listener). */
  notificationUrl?: string;
}

export function writeGraphConfig(
  dir: string,
  name: string,
  standIn: GraphStandIn,
  emu: StartedEmulator,
  users: MailboxSpec[],
  extra: GraphConfigExtra = {},
): string {
  const port = extra.port ?? 0;
  const notifications = extra.notifications
    ? `, notifications: { url: "${extra.notificationUrl ?? `http://127.0.0.1:${port}/graph/m365/notifications`}", client_state: "${CLIENT_STATE}" }`
    : '';
  return writeServeConfig(
    dir,
    name,
    emu,
    '"string:Mailbox": "{mailbox}", "string:Folder": "{folder}"',
    [
      '  graph:',
      `    - { name: m365, route: support, tenant_id: ${standIn.tenantId}, client_id: ${CLIENT_ID}, auth: { client_secret: "\${GRAPH_SECRET}" }, ` +
        `authority_url: "${standIn.url}", graph_url: "${standIn.graphUrl}", mailboxes: ${mailboxList(users)}` +
        `${notifications}${extra.entry ? `, ${extra.entry}` : ''} }`,
    ],
    { ...extra, ...(extra.notifications ? { publicPort: port } : {}) },
  );
}

export const graphEnv = (emu: StartedEmulator): Record<string, string> => serveEnv(emu, { GRAPH_SECRET: 'stand-in-secret' });

export type GraphStatusLine = MailboxStatusLine;

/** The Graph mailboxes of /api/status. */
export const graphStatus = (url: string): Promise<GraphStatusLine[]> => kindStatus(url, 'graph');
