/**
 * Configuration of an `ses` webhook endpoint: Amazon SES receipt rules publishing to SNS
 * topics, which POST to this endpoint through an HTTP/S subscription.
 */
import { z } from 'zod';

/** An SNS message is at most 256 KiB; room for the JSON envelope around it. */
export const SES_DEFAULT_BODY_LIMIT = 1024 * 1024;
/** SNS signs once and retries for at most 3600 s with the same Timestamp; plus clock skew. */
export const SES_DEFAULT_MAX_AGE_S = 3900;
export const SES_DEFAULT_CERT_HOST_PATTERN = '^sns\\.[a-z0-9-]+\\.amazonaws\\.com(\\.cn)?$';

const TOPIC_ARN_RE = /^arn:aws(-[a-z]+)*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/;

const regex = z.string().refine(
  (s) => {
    try {
      new RegExp(s);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a valid regular expression' },
);

/** The SES provider's own fields within `adapters.webhooks[]` (the common ones come from ../config.ts). */
export const sesFields = {
  provider: z.literal('ses').describe('Amazon SES inbound through an SNS HTTP/S subscription.'),
  body_limit: z
    .number()
    .int()
    .min(1)
    .default(SES_DEFAULT_BODY_LIMIT)
    .describe(`Largest request body, in bytes (413 over it). Default ${SES_DEFAULT_BODY_LIMIT} (1 MiB; SNS messages are at most 256 KiB).`),
  topic_arns: z
    .array(z.string().regex(TOPIC_ARN_RE, 'not an SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)'))
    .min(1)
    .describe('The SNS topics whose subscription confirmations and notifications are taken; any other topic is refused. No default.'),
  s3: z
    .object({
      buckets: z.array(z.string().min(3).max(63)).min(1).describe('Buckets an S3 receipt action may name; others are refused.'),
      region: z
        .string()
        .regex(/^[a-z0-9-]+$/)
        .optional()
        .describe("The buckets' region. Default: the region of the notification's topic."),
    })
    .strict()
    .optional()
    .describe(
      'Fetch the message of an S3 receipt action with an unsigned HTTPS GET (the bucket policy must allow the gateway to read, ' +
        'e.g. by source IP or VPC endpoint). Default: none, such notifications are refused as unsupported.',
    ),
  signature_versions: z
    .array(z.union([z.literal(1), z.literal(2)]))
    .min(1)
    .default([1, 2])
    .describe(
      'Accepted SNS SignatureVersion values: 1 (RSA-SHA1), 2 (RSA-SHA256). Default [1, 2]; [2] once the topics sign with version 2.',
    ),
  cert_host_pattern: regex
    .default(SES_DEFAULT_CERT_HOST_PATTERN)
    .describe(
      `Regular expression the host of SigningCertURL and SubscribeURL must match (https only). Default ${SES_DEFAULT_CERT_HOST_PATTERN}.`,
    ),
  max_age_s: z
    .number()
    .int()
    .min(60)
    .max(86_400)
    .default(SES_DEFAULT_MAX_AGE_S)
    .describe(
      'Oldest SNS Timestamp taken, in seconds before now (SNS retries a message with its first Timestamp for up to 3600 s). ' +
        `Default ${SES_DEFAULT_MAX_AGE_S}.`,
    ),
  certificates: z
    .record(z.string().url(), z.string().min(1))
    .optional()
    .describe(
      'Pinned SNS signing certificates: SigningCertURL → path of a PEM file read at start and used instead of fetching that URL ' +
        '(air-gapped deployments, tests). A URL not listed is fetched over HTTPS as usual. Default: none.',
    ),
  simulation: z
    .object({
      private_key_pem: z.string().min(1).describe('PEM RSA private key that signs simulated notifications.'),
      signing_cert_url: z.string().url().describe('SigningCertURL put in simulated notifications (serving the matching certificate).'),
    })
    .strict()
    .optional()
    .describe('For `mailgate webhook simulate` and tests only: how to sign simulated SNS notifications. Default: none (simulate refuses).'),
};

/** The provider as the configuration sees it: its fields and the rules across them (one line in webhooks/providers-config.ts). */
export const provider = {
  fields: sesFields,
};
