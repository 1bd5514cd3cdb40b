/** Mailbox controls shared by every pull kind: filters, start time, states and their vocabulary. */
export { controlFields, controlsOf, participantsSchema, sinceSchema, SKIP_KINDS, type MailboxControls, type SkipKind } from './schema.js';
export { compileFilter, FILTER_HEADER_FIELDS, headerFields, type FilterReason, type FilterVerdict, type MessageFilter } from './filter.js';
export { folderMatches } from './folders.js';
export { participantMatches } from './participants.js';
export { firstSync, firstSyncKey, isDuration, resolveSince, sinceDate } from './since.js';
export { DISABLE_REASONS, MAILBOX_ERROR_KINDS, mailboxErrorKind, type DisableReason, type MailboxErrorKind } from './errors.js';
