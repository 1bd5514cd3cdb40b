/** The SMTP/LMTP adapter: mail servers hand messages to mailgate; 250 once they are durable. docs/smtp.md. */
import type { KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, AdapterContext } from '../../src/pipeline/types.js';
import { SmtpAdapter } from './adapter.js';
import type { SmtpEntry } from './config.js';

export { SmtpAdapter } from './adapter.js';
export { smtpEntrySchema, type SmtpEntry, type SmtpEntryInput } from './config.js';
export { recipientMatcher, plusParts, type RecipientMatch } from './recipients.js';
export { allowList, isLoopback } from './network.js';
export { verifyMessage, type DnsResolver } from './verify.js';

/** The factory of one entry of `adapters.smtp[]`. */
export function create(entry: SmtpEntry, ctx: AdapterContext): Adapter {
  return new SmtpAdapter(entry, ctx.logger);
}

/** The kind's implementation (adapters/smtp/kind.ts). */
export const implementation: KindImplementation<SmtpEntry> = { create };
