/**
 * The library's view of the error catalogue: every code, the core's and each adapter kind's,
 * with its meaning and answers (`ERROR_CATALOGUE`), and code → meaning (`ERROR_CODES`).
 */
import { errorCatalogue } from '../adapters/config.js';
import { WARNING_CODES, type ErrorCatalogue } from './errors.js';

export const ERROR_CATALOGUE: ErrorCatalogue = errorCatalogue();

/** Every code with its one-line meaning. */
export const ERROR_CODES: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(Object.entries(ERROR_CATALOGUE).map(([code, def]) => [code, def.message])),
);

const cell = (s: string) => s.replaceAll('|', '\\|');

/** docs/errors.md: every code by area, in catalogue order, with its answers; then the warnings. */
export function renderErrorDocs(catalogue: ErrorCatalogue = ERROR_CATALOGUE): string {
  const areas = new Map<string, string[]>();
  for (const code of Object.keys(catalogue)) {
    const area = code.split('_')[2]!.toLowerCase();
    areas.set(area, [...(areas.get(area) ?? []), code]);
  }
  const out = [
    '# Error and warning codes',
    '',
    'Every failure mailgate reports carries a stable code `MAILGATE_ERR_<AREA>_<WHAT>`; every non-fatal finding a warning code `MAILGATE_WARN_<WHAT>`. Decide on the code, never on the message text. Where a code answers an HTTP request or a mail transaction, its status or SMTP reply code is beside it (webhook endpoints answer some codes with their provider\'s own status: docs/webhooks.md). Every HTTP error answer has the body `{ "error": { "code", "message" } }`.',
    '',
    "This page is generated from the catalogue (src/errors.ts and each adapter kind's errors.ts) by `npm run docs:errors`; `test/core/errors.test.ts` keeps the two in step.",
  ];
  for (const [area, codes] of areas) {
    out.push('', `## ${area}`, '', '| code | meaning | HTTP | SMTP |', '|---|---|---|---|');
    for (const code of codes) {
      const def = catalogue[code]!;
      out.push(`| \`${code}\` | ${cell(def.message)} | ${def.http ?? ''} | ${def.smtp ?? ''} |`);
    }
  }
  out.push('', '## warnings', '', '| code | meaning |', '|---|---|');
  for (const [code, message] of Object.entries(WARNING_CODES)) out.push(`| \`${code}\` | ${cell(message)} |`);
  return `${out.join('\n')}\n`;
}
