/**
 * The Gmail stand-in as the kind offers it to `mailgate emulator --stand-in gmail`: one
 * Workspace mailbox holding sample mail (some with attachments), the service account key file
 * the stand-in signs for (written beside the others of the run, in a folder of its own), and the
 * `adapters.gmail[]` entry that reads it printed for the operator to paste.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StandIn } from '../../../src/pipeline/kind.js';
import { sampleMessage } from './message.js';
import { GmailStandIn } from './server.js';

/** The mailbox the stand-in is filled with, and how many sample messages it holds. */
export const STAND_IN_MAILBOX = 'support@example.test';
export const STAND_IN_MESSAGES = 20;

export const standIn: StandIn = {
  async start({ host, print }) {
    const s = new GmailStandIn();
    await s.listen(0, host);
    s.addMailbox(STAND_IN_MAILBOX);
    s.deliver(
      STAND_IN_MAILBOX,
      Array.from({ length: STAND_IN_MESSAGES }, (_, i) =>
        sampleMessage(i, { mailbox: STAND_IN_MAILBOX, ...(i % 3 === 0 && { attachmentBytes: 20_000 }) }),
      ),
    );
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-gmail-stand-in-'));
    const keyFile = join(dir, 'sa-key.json');
    writeFileSync(keyFile, JSON.stringify(s.keyFile()), { mode: 0o600 });
    print(
      `Gmail stand-in listening on ${s.url}: mailbox ${STAND_IN_MAILBOX} with ${STAND_IN_MESSAGES} messages (docs/gmail.md "The stand-in")`,
    );
    print('  read it with this entry under adapters.gmail (route: one of yours):');
    for (const line of [
      `- { name: standin, route: support, auth: { service_account: ${keyFile} },`,
      `    api_url: ${s.url}, mailboxes: [{ user: ${STAND_IN_MAILBOX} }] }`,
    ])
      print(`    ${line}`);
    return {
      url: s.url,
      close: async () => {
        await s.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
