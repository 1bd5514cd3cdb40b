/**
 * The API mailbox kinds (Graph, Gmail) as the `mailgate serve` tests that hold for both use
 * them: the kind's stand-in (in this process) with working mailboxes and a failing one (Graph
 * answers 403 for it, Google refuses its token: no delegation), mail delivered to it, and a
 * configuration file around one entry of the kind (api-serve-setup.ts).
 */
import { sampleMessage as gmailMessage, startGmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { sampleMessage as graphMessage, startGraphStandIn } from '../../adapters/graph/stand-in/index.js';
import type { StartedEmulator } from '../support/emulator.js';
import type { MailboxSpec, ServeConfig } from './api-serve-setup.js';
import { gmailEnv, writeGmailConfig } from './gmail-serve-setup.js';
import { graphEnv, writeGraphConfig } from './graph-serve-setup.js';

export interface KindStandIn {
  /** A mailbox; `failing`: one the provider refuses. */
  addMailbox(user: string, failing?: boolean): void;
  /** `n` messages (from number `from`) into the mailbox's inbox; with `attachmentBytes`, 30 % carry an attachment that large. */
  deliver(user: string, from: number, n: number, attachmentBytes?: number): void;
  /** `<dir>/<name>.yaml` with one entry of the kind (`entry`: more fields of it, YAML flow text). */
  write(dir: string, name: string, emu: StartedEmulator, users: MailboxSpec[], extra?: ServeConfig & { entry?: string }): string;
  env(emu: StartedEmulator): Record<string, string>;
  close(): Promise<void>;
}

export interface ApiKind {
  kind: string;
  /** The entry's name: mailboxes are `<instance>/<user>`. */
  instance: string;
  domain: string;
  /** What a failing mailbox shows. */
  failing: { code: string; errorKind: string };
  start(): Promise<KindStandIn>;
}

const withAttachment = (i: number, bytes: number | undefined) => (bytes !== undefined && i % 10 < 3 ? { attachmentBytes: bytes } : {});

export const API_KINDS: ApiKind[] = [
  {
    kind: 'graph',
    instance: 'm365',
    domain: 'contoso.test',
    failing: { code: 'MAILGATE_ERR_GRAPH_FORBIDDEN', errorKind: 'access_denied' },
    async start() {
      const s = await startGraphStandIn();
      return {
        addMailbox: (user, failing = false) => void s.addMailbox(user, { forbidden: failing }),
        deliver: (user, from, n, bytes) =>
          void s.deliver(
            user,
            'inbox',
            Array.from({ length: n }, (_, i) => graphMessage(from + i, { mailbox: user, tag: user, ...withAttachment(from + i, bytes) })),
          ),
        write: (dir, name, emu, users, extra = {}) => writeGraphConfig(dir, name, s, emu, users, extra),
        env: graphEnv,
        close: () => s.close(),
      };
    },
  },
  {
    kind: 'gmail',
    instance: 'workspace',
    domain: 'example.test',
    failing: { code: 'MAILGATE_ERR_GMAIL_DELEGATION', errorKind: 'insufficient_scope' },
    async start() {
      const s = await startGmailStandIn();
      return {
        addMailbox: (user, failing = false) => void s.addMailbox(user, { delegated: !failing }),
        deliver: (user, from, n, bytes) =>
          void s.deliver(
            user,
            Array.from({ length: n }, (_, i) => gmailMessage(from + i, { mailbox: user, tag: user, ...withAttachment(from + i, bytes) })),
          ),
        write: (dir, name, emu, users, extra = {}) => writeGmailConfig(dir, name, s, emu, users, extra),
        env: gmailEnv,
        close: () => s.close(),
      };
    },
  },
];
