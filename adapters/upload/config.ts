/**
 * Configuration of one upload endpoint (`adapters.upload[]`): POST /api/upload/<name> takes
 * messages (.eml, mbox, Outlook .msg, Outlook PST/OST) from people and scripts holding one of its keys.
 */
import { z } from 'zod';

const MIB = 1024 * 1024;
export const UPLOAD_DEFAULT_BODY_LIMIT = 40 * MIB;
export const UPLOAD_DEFAULT_MAX_FILES = 1000;
export const UPLOAD_DEFAULT_MAX_MESSAGES = 10_000;
export const UPLOAD_DEFAULT_IDEMPOTENCY_KEYS = 10_000;

export const uploadConfigSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)
      .describe('Endpoint name (lower case, digits, - and _): uploads go to POST /api/upload/<name>.'),
    route: z.string().min(1).describe('The route (delivery.routes[].name) uploaded messages go to.'),
    api_keys: z
      .array(z.string().min(16, 'an upload key must be at least 16 characters'))
      .min(1)
      .describe(
        'Accepted keys, sent as Authorization: Bearer <key> or X-Api-Key: <key> (several for rotation; at least 16 characters each).',
      ),
    body_limit: z
      .number()
      .int()
      .min(1)
      .default(UPLOAD_DEFAULT_BODY_LIMIT)
      .describe(
        'Largest request body, in bytes; also the largest single file of a multipart upload (413 over it). ' +
          `Default ${UPLOAD_DEFAULT_BODY_LIMIT} (40 MiB).`,
      ),
    max_files: z
      .number()
      .int()
      .min(1)
      .default(UPLOAD_DEFAULT_MAX_FILES)
      .describe(`Most files in one multipart upload (413 over it). Default ${UPLOAD_DEFAULT_MAX_FILES}.`),
    max_messages: z
      .number()
      .int()
      .min(1)
      .default(UPLOAD_DEFAULT_MAX_MESSAGES)
      .describe(`Most messages in one upload, counting every message of every mbox (413 over it). Default ${UPLOAD_DEFAULT_MAX_MESSAGES}.`),
    spool_dir: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Folder an uploaded PST/OST is written to while it is read (a folder of its own per upload, removed once the upload is answered). ' +
          "Default the system's temporary folder.",
      ),
    idempotency_keys: z
      .number()
      .int()
      .min(0)
      .default(UPLOAD_DEFAULT_IDEMPOTENCY_KEYS)
      .describe(
        'How many Idempotency-Key answers are kept in memory (oldest dropped first; 0 keeps none, ' +
          "the store's SHA-256 dedupe still applies). " +
          `Default ${UPLOAD_DEFAULT_IDEMPOTENCY_KEYS}.`,
      ),
  })
  .strict();

export type UploadConfig = z.output<typeof uploadConfigSchema>;
export type UploadConfigInput = z.input<typeof uploadConfigSchema>;
