/**
 * What the entries of the API mailbox kinds (one connection to a provider, its mailboxes each
 * under its own lease, change notifications as wake-ups and a safety poll) share: the
 * connection's name and route, the poll, the wake-up check across replicas, the request
 * deadline, the endpoint URLs (https, or http to a loopback stand-in) and the rule across
 * entries (unique names, a mailbox listed once). The kind says its words for the docs.
 */
import { z } from 'zod';
import { insecureUrlIssue } from '../net.js';

export interface MailboxEntryWords {
  /** The provider as the docs name it (`Graph`, `Gmail`). */
  provider: string;
  /** What the poll runs (`A delta round of every folder`). */
  round: string;
  /** A notification as the provider names it (`a notification`, `a push`). */
  notice: string;
  /** The same, received by another replica (`a change notification`). */
  remoteNotice: string;
}

/** An endpoint URL: https, or http to a loopback host (a local stand-in). */
export function endpointUrl(what: string) {
  return z
    .string()
    .superRefine((u, ctx) => {
      const issue = insecureUrlIssue(u, false);
      if (issue) ctx.addIssue({ code: 'custom', message: issue });
    })
    .describe(`${what}; https, or http to a loopback host (a local stand-in).`);
}

/** The fields every API mailbox entry has, described in the kind's words. */
export function mailboxEntryFields(words: MailboxEntryWords) {
  return {
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, . _ - (1-64)')
      .describe('Connection name: part of checkpoint keys, leases, logs and metrics.'),
    route: z.string().min(1).describe('Route the messages of these mailboxes belong to.'),
    poll_interval_ms: z
      .number()
      .int()
      .min(1000)
      .default(300_000)
      .describe(`${words.round} runs this often whether or not ${words.notice} came, in ms. Default 300000.`),
    wake_check_ms: z
      .number()
      .int()
      .min(100)
      .default(2000)
      .describe(
        `With notifications: how often the replica reading a mailbox looks in the store for ${words.remoteNotice} received by another replica, in ms (the latency of such a wake-up). Default 2000.`,
      ),
    request_timeout_ms: z
      .number()
      .int()
      .min(1000)
      .default(60_000)
      .describe(`Deadline of one HTTP request to ${words.provider} or the token endpoint, in ms. Default 60000.`),
  };
}
