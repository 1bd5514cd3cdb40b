/** The files kind: files and folders read once (`adapters.files[]`), and the reader of the paths named to `mailgate import` and `preview`. */
import { detailLines, detailText } from '../../src/model/origin.js';
import { defineKind } from '../../src/config/kind.js';
import { FILES_ERRORS } from './errors.js';

export const kind = defineKind({
  kind: 'files',
  mode: 'pull',
  schema: async () => (await import('./config.js')).filesEntrySchema,
  description: 'File inputs: .eml, mbox, maildir, .msg and Outlook PST/OST files or folders, read once.',
  errors: FILES_ERRORS,
  // Details: path, index, and folder, labels, account from an archive (types.ts FileDetails).
  showOrigin: (d) => ({
    summary: typeof d['index'] === 'number' && d['index'] > 0 ? `${detailText(d['path'])} #${d['index']}` : (detailText(d['path']) ?? ''),
    lines: [
      ...detailLines(d, [['path', 'File']]),
      ...(typeof d['index'] === 'number' ? [{ label: 'Message in file', value: `#${d['index'] + 1}` }] : []),
      ...detailLines(d, [
        ['folder', 'Folder'],
        ['labels', 'Labels'],
        ['account', 'Account'],
      ]),
    ],
  }),
  load: () => import('./index.js'),
  fileInputs: () => import('./inputs.js'),
});
