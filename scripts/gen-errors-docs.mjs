// Rewrites docs/errors.md from the built error catalogue: `npm run docs:errors`.
import { writeFileSync } from 'node:fs';
import { renderErrorDocs } from '../dist/src/error-catalogue.js';

writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorDocs());
