/** Shared set-up of the Gmail tests: a stand-in, a key file and an entry pointing at it. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gmailEntrySchema, type GmailEntry } from '../../adapters/gmail/config.js';
import { startGmailStandIn, type GmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { standInPerTest, type StandInPerTest } from '../graph/setup.js';

export { MemorySink, quiet, until } from '../graph/setup.js';

/** A Gmail stand-in for each test of the calling file, and the controller that stops what the test started. */
export const gmailStandInPerTest = (): StandInPerTest<GmailStandIn> => standInPerTest(() => startGmailStandIn());

/** Writes the stand-in's service account key file; its path. */
export function keyFileFor(standIn: GmailStandIn): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailgate-gmail-key-')), 'sa-key.json');
  writeFileSync(file, JSON.stringify(standIn.keyFile()));
  return file;
}

export function entryFor(standIn: GmailStandIn, users: string[], more: Record<string, unknown> = {}): GmailEntry {
  return gmailEntrySchema.parse({
    name: 'workspace',
    route: 'support',
    auth: { service_account: keyFileFor(standIn) },
    api_url: standIn.url,
    mailboxes: users.map((user) => ({ user })),
    ...more,
  });
}
