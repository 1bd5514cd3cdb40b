import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { renderConfigDocs, withConfigTable } from '../../src/config/docs.js';
import { ConfigSchema } from '../../src/config/schema.js';

interface Field {
  description?: string;
  default?: unknown;
  properties?: Record<string, Field>;
  items?: Field;
  anyOf?: Field[];
  oneOf?: Field[];
}

/** Every field of the schema with a plain default (number, string, boolean, null), by its path. */
function plainDefaults(field: Field, path: string, out: Array<{ path: string; value: string; description: string }>): typeof out {
  for (const [key, child] of Object.entries(field.properties ?? {})) {
    const at = path ? `${path}.${key}` : key;
    if (child.default !== undefined && (typeof child.default !== 'object' || child.default === null))
      out.push({ path: at, value: String(child.default), description: child.description ?? '' });
    const shapes = [
      child,
      ...(child.items ? [child.items] : []),
      ...[child, child.items ?? {}].flatMap((c) => [...(c.anyOf ?? []), ...(c.oneOf ?? [])]),
    ];
    for (const shape of shapes) plainDefaults(shape, shape === child ? at : `${at}[]`, out);
  }
  return out;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('docs/config.md', () => {
  it('is what the schema renders (run `npm run docs:config` after changing the schema)', () => {
    const onDisk = readFileSync(new URL('../../docs/config.md', import.meta.url), 'utf8');
    expect(onDisk).toBe(renderConfigDocs());
  });

  it("the README's field table is what the schema renders (run `npm run docs:config`)", () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toBe(withConfigTable(readme));
  });

  it('documents every top-level section and nested route field', () => {
    const text = renderConfigDocs();
    for (const field of [
      '`store`',
      '`api.url`',
      '`api.retry.max_attempts`',
      '`routes[].on_property_conflict`',
      '`delivery.max_request_bytes`',
      '`parsing.timeout_ms`',
    ]) {
      expect(text).toContain(field);
    }
  });

  it('says each default as the schema declares it: the prose "Default X" cannot drift from .default(X)', () => {
    const schema = z.toJSONSchema(ConfigSchema, { io: 'input', unrepresentable: 'any' }) as Field;
    const fields = plainDefaults(schema, '', []);
    expect(fields.length).toBeGreaterThan(100);
    const drifted = fields.filter((f) => !new RegExp(`\\b[Dd]efault:? \`?${escape(f.value)}(?![\\w])`).test(f.description));
    expect(drifted.map((f) => `${f.path}: default ${f.value}, described "${f.description}"`)).toEqual([]);
  });
});
