// Rewrites docs/config.md from the built schema: `npm run docs:config`.
import { writeFileSync } from 'node:fs';
import { renderConfigDocs } from '../dist/src/config/docs.js';

writeFileSync(new URL('../docs/config.md', import.meta.url), renderConfigDocs());
