/**
 * The mailbox controls every pull kind shares (IMAP accounts, Graph mailboxes, Gmail
 * mailboxes): which folders (labels) to leave out, whose mail to keep, what to skip, from when,
 * and whether the mailbox runs at all. A kind spreads `controlFields(...)` into the schema of one
 * mailbox, so that the keys, their checks and their documentation are the same everywhere.
 */
import { z } from 'zod';
import { participantRule } from './participants.js';
import { SKIP_KINDS, type SkipKind } from './skip-kinds.js';

export { SKIP_KINDS, type SkipKind };

/** ISO 8601 duration in days and time (`P90D`, `P2W`, `PT12H`, `P1Y2M`). */
export const ISO_DURATION_RE = /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/;

/** An address, `*@domain` (exactly that domain) or `domain` (it and its subdomains). */
const participant = z
  .string()
  .min(1)
  .transform((s) => s.trim().toLowerCase())
  .refine((s) => participantRule(s) !== undefined, {
    message: 'use an address (a@example.com), *@example.com or example.com',
  });

export const participantsSchema = z
  .strictObject({
    allow: z
      .array(participant)
      .default([])
      .describe('Keep only mail where some participant (From, To, Cc) matches one of these. Empty: keep all. Default [].'),
    deny: z.array(participant).default([]).describe('Drop mail where any participant (From, To, Cc) matches one of these. Default [].'),
  })
  .describe(
    "Participant filter: addresses, *@domain (that domain) or domain (it and its subdomains); the mailbox's own address never counts.",
  );

export const sinceSchema = z
  .union([z.iso.datetime({ offset: true }), z.iso.date(), z.string().regex(ISO_DURATION_RE, 'an ISO 8601 duration such as P90D')])
  .describe(
    'Start time: an ISO date (mail received on or after it), or an ISO 8601 duration (P90D) counted back from the mailbox’s first sync.',
  );

const patterns = (what: string) =>
  z
    .array(z.string().min(1))
    .default([])
    .describe(
      `${what} to leave out: paths with / as the separator, * for one level and ** for any depth (Archive/**, */Spam). Default [].`,
    );

const common = {
  participants: participantsSchema.optional(),
  skip: z
    .array(z.enum(SKIP_KINDS))
    .default([])
    .describe(
      'Kinds of mail to leave out: auto_replies (Auto-Submitted), mailing_lists (List-Id, Precedence: bulk|list|junk). Default [].',
    ),
  since: sinceSchema.optional(),
  enabled: z
    .boolean()
    .default(true)
    .describe('Read this mailbox (a disable by `mailgate mailboxes disable` wins until enabled). Default true.'),
  disable_after_ms: z
    .number()
    .int()
    .min(1_000)
    .default(86_400_000)
    .describe(
      'A mailbox failing this long without a success is disabled (reason sync_error), in ms (retries with backoff until then). Default 86400000.',
    ),
};

/** The control keys of one mailbox; Gmail names its folders labels (`exclude_labels`). */
export function controlFields(word: 'folders'): typeof common & { exclude_folders: ReturnType<typeof patterns> };
export function controlFields(word: 'labels'): typeof common & { exclude_labels: ReturnType<typeof patterns> };
export function controlFields(word: 'folders' | 'labels') {
  return word === 'folders' ? { exclude_folders: patterns('Folders'), ...common } : { exclude_labels: patterns('Labels'), ...common };
}

/** The parsed controls of one mailbox, whatever the kind calls its folders. */
export interface MailboxControls {
  exclude?: readonly string[];
  participants?: { allow: readonly string[]; deny: readonly string[] } | undefined;
  skip: readonly SkipKind[];
  since?: string | undefined;
  enabled: boolean;
  disable_after_ms: number;
}

/** The controls of a mailbox entry as the schema parsed it (defaults filled in), `exclude_folders` or `exclude_labels`. */
export function controlsOf(entry: {
  exclude_folders?: string[];
  exclude_labels?: string[];
  participants?: { allow: string[]; deny: string[] } | undefined;
  skip: SkipKind[];
  since?: string | undefined;
  enabled: boolean;
  disable_after_ms: number;
}): MailboxControls {
  return {
    exclude: entry.exclude_folders ?? entry.exclude_labels ?? [],
    participants: entry.participants,
    skip: entry.skip,
    since: entry.since,
    enabled: entry.enabled,
    disable_after_ms: entry.disable_after_ms,
  };
}
