/**
 * Renders the configuration reference (docs/config.md) from the schema itself, so the
 * documentation cannot drift from what is validated. `npm run docs:config` rewrites the file;
 * test/config/docs.test.ts fails when it is stale.
 */
import { z } from 'zod';
import { ConfigSchema } from './schema.js';

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  const?: unknown;
  additionalProperties?: JsonSchema | boolean;
}

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(' \\| ');
  if (s.const !== undefined) return JSON.stringify(s.const);
  const alts = s.anyOf ?? s.oneOf;
  // Alternative shapes of one object (IMAP auth) are told apart by their keys.
  if (alts) return alts.map((a) => (a.type === 'object' && a.properties ? `{ ${Object.keys(a.properties).join(', ')} }` : typeOf(a))).join(' \\| ');
  if (s.type === 'array') return `list of ${s.items ? typeOf(s.items) : 'any'}`;
  if (Array.isArray(s.type)) return s.type.join(' \\| ');
  return s.type ?? 'any';
}

function rows(schema: JsonSchema, prefix: string, out: string[]): void {
  for (const [key, prop] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    const nested = prop.properties ? prop : prop.type === 'array' && prop.items?.properties ? prop.items : undefined;
    const desc = (prop.description ?? nested?.description ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
    out.push(`| \`${path}\` | ${typeOf(prop)} | ${desc} |`);
    if (nested) rows(nested, prop.type === 'array' ? `${path}[]` : path, out);
  }
}

export function renderConfigDocs(): string {
  const schema = z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const out = [
    '# Configuration reference',
    '',
    'Generated from `src/config/schema.ts` by `npm run docs:config`; do not edit by hand.',
    '',
    'Precedence: embedded defaults < `mailgate.yaml` < environment (`MAILGATE_STORE`, `MAILGATE_API_URL`,',
    '`MAILGATE_API_TOKEN`, `MAILGATE_LISTEN`, `MAILGATE_LOG_LEVEL`) < command-line flags. Any string may use',
    '`${VAR}` or `${VAR:-default}`; `$$` is a literal `$`. Unknown keys are errors that name their path.',
    '',
    '| field | type | meaning and default |',
    '|---|---|---|',
  ];
  rows(schema, '', out);
  return out.join('\n') + '\n';
}
