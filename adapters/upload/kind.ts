/** The upload kind: HTTP upload endpoints behind their own keys (docs/upload.md). */
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { uploadConfigSchema } from './config.js';
import { UPLOAD_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'upload',
  mode: 'push',
  schema: uploadConfigSchema,
  description: 'HTTP upload endpoints (POST /api/upload/<name>) behind their own keys; docs/upload.md.',
  errors: UPLOAD_ERRORS,
  unique: uniqueNames('upload'),
  load: () => import('./index.js'),
});
