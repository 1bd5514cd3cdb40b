import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const samples = new URL('../../samples/files/eml/', import.meta.url);

describe('the package main export', () => {
  it('resolves through package.json "exports" to the built library and previews without the CLI', async () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      exports: { '.': { default: string } };
    };
    const lib = (await import(new URL(`../../${pkg.exports['.'].default}`, import.meta.url).href)) as typeof import('../../src/index.js');
    const raw = readFileSync(new URL('01-hello.eml', samples));
    const { document, comment, warnings } = await lib.preview(raw);
    expect(lib.RawEmailDocument.safeParse(document).success).toBe(true);
    expect(lib.Comment.safeParse(comment).success).toBe(true);
    expect(comment.messages[0]?.subject?.text).toBe('Hello');
    expect(document.comment_id).toBe(Buffer.from('<hello-1@example.com>').toString('hex'));
    expect(warnings).toEqual([]);
    for (const name of [
      'parseMessage',
      'buildDocument',
      'buildComment',
      'computeThreadProperties',
      'createApiClient',
      'deliverBatch',
      'createEmulator',
      'openStore',
      'loadConfig',
      'createRuntime',
    ] as const) {
      expect(typeof lib[name]).toBe('function');
    }
  });
});
