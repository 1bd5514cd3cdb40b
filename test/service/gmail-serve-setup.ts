/**
 * Set-up of the `mailgate serve` + Gmail tests (the shared part: api-serve-setup.ts): the
 * stand-in's key file, a configuration pointing at the stand-in (in this process) and an emulator.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
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
export const AUDIENCE = 'https://mailgate.example.test/gmail/workspace/push';
export const PUSHER = 'pubsub-push@stand-in-project.iam.gserviceaccount.com';

export interface GmailConfigExtra extends Omit<ServeConfig, 'publicPort'> {
  /** Port of the public listener (the push endpoint's); with it, users.watch and push are configured. */
  pushPort?: number;
  /** Fields of the gmail entry, as YAML flow text. */
  entry?: string;
}

export function writeGmailConfig(
  dir: string,
  name: string,
  standIn: GmailStandIn,
  emu: StartedEmulator,
  users: MailboxSpec[],
  extra: GmailConfigExtra = {},
): string {
  const key = join(dir, `${name}-sa-key.json`);
  writeFileSync(key, JSON.stringify(standIn.keyFile()));
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
  return writeServeConfig(
    dir,
    name,
    emu,
    '"string:Mailbox": "{mailbox}", "string:Labels": "{labels}"',
    [
      '  gmail:',
      `    - { name: workspace, route: support, auth: { service_account: "${key}" }, api_url: "${standIn.url}", ` +
        `mailboxes: ${mailboxList(users)}${notifications}${extra.entry ? `, ${extra.entry}` : ''} }`,
    ],
    { ...extra, ...(extra.pushPort === undefined ? {} : { publicPort: extra.pushPort }) },
  );
}

export const gmailEnv = (emu: StartedEmulator): Record<string, string> => serveEnv(emu);

export type GmailStatusLine = MailboxStatusLine;

/** The Gmail mailboxes of /api/status. */
export const gmailStatus = (url: string): Promise<GmailStatusLine[]> => kindStatus(url, 'gmail');
