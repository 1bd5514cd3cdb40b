/**
 * The curated corpus in samples/mime: each `<name>.eml` with `<name>.expected.json`
 * ({ document, warnings }: the exact document and the warning codes in order) and an
 * optional `<name>.options.json` (DocumentOptions).
 */
import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { RawEmailDocument } from '../../src/model/index.js';

const dir = fileURLToPath(new URL('../../samples/mime/', import.meta.url));
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.eml'))
  .map((f) => f.slice(0, -4))
  .sort();

describe('samples/mime', () => {
  it('holds at least 25 cases, each with its expected document', () => {
    expect(names.length).toBeGreaterThanOrEqual(25);
    for (const n of names) expect(existsSync(`${dir}${n}.expected.json`), n).toBe(true);
  });

  it.each(names)('%s', (name) => {
    const optionsPath = `${dir}${name}.options.json`;
    const options = existsSync(optionsPath) ? JSON.parse(readFileSync(optionsPath, 'utf8')) : undefined;
    const expected = JSON.parse(readFileSync(`${dir}${name}.expected.json`, 'utf8'));
    const result = buildDocument(parseMessage(readFileSync(`${dir}${name}.eml`)), options);
    expect(result.document).toEqual(expected.document);
    expect(result.warnings.map((w) => w.code)).toEqual(expected.warnings);
    expect(RawEmailDocument.safeParse(result.document).success).toBe(true);
  });
});
