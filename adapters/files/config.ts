/**
 * Configuration of one files input, embedded in the configuration as `adapters.files[]`.
 * Kept apart from the readers so that the configuration loads without them.
 */
import { z } from 'zod';

export const filesEntrySchema = z
  .object({
    name: z.string().min(1).describe('Adapter instance name.'),
    route: z.string().min(1).describe('Route the messages go to.'),
    paths: z.array(z.string().min(1)).min(1).describe('Files or folders: .eml, mbox, maildir, .msg, Outlook PST/OST.'),
  })
  .strict();

export type FilesEntry = z.output<typeof filesEntrySchema>;
