/** The files kind: files and folders read once (`adapters.files[]`), and the reader of the paths named to `mailgate import` and `preview`. */
import { defineKind } from '../../src/config/kind.js';
import { filesEntrySchema } from './config.js';
import { FILES_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'files',
  mode: 'pull',
  schema: filesEntrySchema,
  description: 'File inputs: .eml, mbox, maildir, .msg and Outlook PST/OST files or folders, read once.',
  errors: FILES_ERRORS,
  load: () => import('./index.js'),
  fileInputs: () => import('./inputs.js'),
});
