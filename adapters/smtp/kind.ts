/** The SMTP/LMTP kind: mail servers hand messages over, answered 250 once stored (docs/smtp.md). */
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { SMTP_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'smtp',
  mode: 'push',
  schema: async () => (await import('./config.js')).smtpEntrySchema,
  description: 'SMTP and LMTP listeners: mail servers hand messages over, answered 250 once stored; behaviour in docs/smtp.md.',
  errors: SMTP_ERRORS,
  unique: uniqueNames('smtp'),
  routes: recipientRoutes,
  // No details: what an SMTP client states is the envelope, shown beside.
  showOrigin: () => ({ summary: '', lines: [] }),
  load: () => import('./index.js'),
});

/** The routes recipients name, for the configuration's check that every route exists. */
export function recipientRoutes(entry: Record<string, unknown>): Array<{ path: Array<string | number>; route: unknown }> {
  const list = Array.isArray(entry['recipients']) ? (entry['recipients'] as unknown[]) : [];
  return list.flatMap((r, i) => {
    const route = typeof r === 'object' && r !== null ? (r as Record<string, unknown>)['route'] : undefined;
    return route === undefined ? [] : [{ path: ['recipients', i, 'route'], route }];
  });
}
