/** Schema pieces the providers' configuration schemas share (basic auth, secrets, freshness windows). */
import { z } from 'zod';

export const secret = (what: string) => z.string().min(1).describe(`${what} (use \${ENV} interpolation, never a literal in the file).`);

export const basicAuthSchema = z
  .strictObject({
    user: z.string().min(1).describe('User name the provider sends in HTTP basic auth.'),
    pass: secret('Password the provider sends in HTTP basic auth'),
  })
  .describe('HTTP basic auth credentials the provider sends (put them in the webhook URL: https://user:pass@host/path).');

export type BasicAuth = z.infer<typeof basicAuthSchema>;

/** A freshness window in seconds: 1 s to 1 day (describe it after .optional()/.default(): wrappers carry their own description). */
export const maxAgeSeconds = () => z.number().int().min(1).max(86_400);
