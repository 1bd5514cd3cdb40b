import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigDocs, withConfigTable } from '../../src/config/docs.js';

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
});
