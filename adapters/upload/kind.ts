/** The upload kind: HTTP upload endpoints behind their own keys (docs/upload.md). */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind, uniqueNames } from '../../src/config/kind.js';
import { UPLOAD_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'upload',
  mode: 'push',
  schema: async () => (await import('./config.js')).uploadConfigSchema,
  description: 'HTTP upload endpoints (POST /api/upload/<name>) behind their own keys; docs/upload.md.',
  errors: UPLOAD_ERRORS,
  unique: uniqueNames('upload'),
  // Details: the file a message came in (multipart), its index (mbox) and folder (PST) (adapter.ts).
  showOrigin: (d) => ({
    summary: detailText(d['path']) ?? '',
    lines: [
      ...detailLines(d, [['path', 'File']]),
      ...(typeof d['index'] === 'number' ? [{ label: 'Message in file', value: `#${d['index'] + 1}` }] : []),
      ...detailLines(d, [['folder', 'Folder']]),
    ],
  }),
  load: () => import('./index.js'),
});
