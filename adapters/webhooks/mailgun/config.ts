/** Mailgun routes (forward() to a URL ending in `mime`): HMAC-SHA256 signing key and freshness window. */
import { z } from 'zod';
import { maxAgeSeconds, secret } from '../shared-config.js';

/**
 * 300 s: Rails ActionMailbox refuses timestamps older than 120 s in production, which shows
 * Mailgun signs each attempt afresh; 300 s leaves room for clock skew and queueing at Mailgun
 * while the replay cache covers the window.
 */
export const MAILGUN_DEFAULT_MAX_AGE_S = 300;

export const mailgunFields = {
  provider: z.literal('mailgun').describe('Mailgun route forward() to a URL ending in `mime` (field body-mime).'),
  signing_key: secret('HTTP webhook signing key of the Mailgun account'),
  max_age_s: maxAgeSeconds()
    .default(MAILGUN_DEFAULT_MAX_AGE_S)
    .describe(`Largest difference between the signed timestamp and now, in seconds, either way. Default ${MAILGUN_DEFAULT_MAX_AGE_S}.`),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: mailgunFields,
};
