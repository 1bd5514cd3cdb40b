// Rewrites docs/config.md and the README's config table from the built schema: `npm run docs:config`.
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigDocs, withConfigTable } from '../dist/src/config/docs.js';

writeFileSync(new URL('../docs/config.md', import.meta.url), renderConfigDocs());
const readme = new URL('../README.md', import.meta.url);
writeFileSync(readme, withConfigTable(readFileSync(readme, 'utf8')));
