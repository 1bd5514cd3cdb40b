/**
 * The Graph stand-in as the kind offers it to `mailgate emulator --stand-in graph`: one tenant
 * with one app registration and a support mailbox holding sample mail (some with attachments),
 * and the `adapters.graph[]` entry that reads it printed for the operator to paste.
 */
import type { StandIn } from '../../../src/pipeline/kind.js';
import { sampleMessage } from './message.js';
import { GraphStandIn } from './server.js';

/** The mailbox the stand-in is filled with, and how many sample messages it holds. */
export const STAND_IN_MAILBOX = 'support@contoso.test';
export const STAND_IN_MESSAGES = 20;
const CLIENT_ID = '3b1a5f0e-0000-4000-8000-000000000001';
const SECRET = 'stand-in-secret';

export const standIn: StandIn = {
  async start({ host, print }) {
    const s = new GraphStandIn({ clients: [{ clientId: CLIENT_ID, secret: SECRET }] });
    await s.listen(0, host);
    s.addMailbox(STAND_IN_MAILBOX);
    s.deliver(
      STAND_IN_MAILBOX,
      'inbox',
      Array.from({ length: STAND_IN_MESSAGES }, (_, i) =>
        sampleMessage(i, { mailbox: STAND_IN_MAILBOX, ...(i % 3 === 0 && { attachmentBytes: 20_000 }) }),
      ),
    );
    print(
      `Graph stand-in listening on ${s.url}: mailbox ${STAND_IN_MAILBOX} with ${STAND_IN_MESSAGES} messages (docs/graph.md "The stand-in")`,
    );
    print('  read it with this entry under adapters.graph (route: one of yours):');
    for (const line of [
      `- { name: standin, route: support, tenant_id: ${s.tenantId}, client_id: ${CLIENT_ID},`,
      `    auth: { client_secret: ${SECRET} }, authority_url: ${s.url}, graph_url: ${s.graphUrl},`,
      `    mailboxes: [{ user: ${STAND_IN_MAILBOX} }] }`,
    ])
      print(`    ${line}`);
    return { url: s.url, close: () => s.close() };
  },
};
