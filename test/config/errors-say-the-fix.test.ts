/**
 * Configuration errors say the fix: the typo `transfrom_tag` was only "Unrecognized key", a quoted
 * number only "expected number, received string", and an over-indented line was reported at the
 * line above it. Each now names the field it most likely means, what the value must be with an
 * example, and the line and column of the setting.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closest, distance } from '../../src/config/explain.js';
import { loadConfig } from '../../src/config/load.js';
import { loadStoreUrl } from '../../src/config/store-url.js';

function failure(yaml: string, load: (file: string) => unknown = (file) => loadConfig({ file, env: {} })): string {
  const file = join(mkdtempSync(join(tmpdir(), 'mailgate-explain-')), 'mailgate.yaml');
  writeFileSync(file, yaml);
  try {
    load(file);
  } catch (err) {
    expect((err as { code?: string }).code).toBe('MAILGATE_ERR_CONFIG_INVALID');
    return (err as Error).message;
  }
  throw new Error('loaded');
}

describe('configuration errors', () => {
  it('an unknown field: the field it most likely means, or the fields there are, and where it is written', () => {
    const text = failure(
      [
        'server: { listn: 127.0.0.1:8080 }',
        'delivery:',
        '  batch_size: 10',
        'routes:',
        '  - name: support',
        '    source: acme/support',
        '    transfrom_tag: x',
        '',
      ].join('\n'),
    );
    expect(text).toContain('routes[0].transfrom_tag: unknown field "transfrom_tag"; did you mean "transform_tag"? (line 7, column 5)');
    expect(text).toContain('server.listn: unknown field "listn"; did you mean "listen"? (line 1, column 11)');
    expect(text).toMatch(
      /delivery\.batch_size: unknown field "batch_size"; the fields here are concurrency, .*max_documents.* \(line 3, column 3\)/,
    );
    expect(text).not.toContain('Unrecognized key');
    expect(failure('rotues: []\n')).toContain('rotues: unknown field "rotues"; did you mean "routes"? (line 1, column 1)');
    expect(
      failure(
        'adapters:\n  imap:\n    - { name: a, route: r, host: h, auth: { user: u, pass: p }, folderz: [INBOX] }\nroutes: [{ name: r, source: a/b }]\n',
      ),
    ).toContain('adapters.imap[0].folderz: unknown field "folderz"; did you mean "folders"?');
  });

  it('a value of the wrong type: what it must be, what was written and an example', () => {
    const text = failure(['delivery:', '  concurrency: four', '  flush_ms: "250"', 'server:', '  public_preview: 3', ''].join('\n'));
    expect(text).toContain(
      'delivery.concurrency: must be a number, not the text "four"; for example concurrency: 2 (the default) (line 2, column 16)',
    );
    expect(text).toContain(
      'delivery.flush_ms: must be a number, not the text "250"; write it without quotes: flush_ms: 250 (line 3, column 13)',
    );
    expect(text).toContain(
      'server.public_preview: must be true or false, not the number 3; for example public_preview: false (the default)',
    );
    expect(text).not.toContain('Invalid input');
  });

  it('a secret in a field of the wrong type is not repeated', () => {
    const text = failure(['api:', '  url: https://api.example', '  token: [hunter2-SECRET]', ''].join('\n'));
    expect(text).not.toContain('hunter2-SECRET');
    expect(text).toContain('api.token');
  });

  it('an over-indented line is reported at that line, not the one above', () => {
    const text = failure(['routes:', '  - name: support', '    source: acme/support', '      mode: sync', ''].join('\n'));
    expect(text).toMatch(
      /is not valid YAML: line 4, column 7: this line is indented deeper than the setting above it.*\(BLOCK_AS_IMPLICIT_KEY\)$/,
    );
  });

  it('a tab and a duplicate key say what to do', () => {
    expect(failure('routes:\n\t- name: a\n')).toMatch(/line 2, column 1: a tab in the indentation: indent with spaces/);
    expect(failure('api:\n  url: https://a.example\n  url: https://b.example\n')).toMatch(/line 3, column 3: this setting is given twice/);
  });

  it('the store alone (read-only commands) is explained the same way', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'mailgate-explain-')), 'mailgate.yaml');
    writeFileSync(file, 'store: 42\n');
    const err = (await loadStoreUrl({ file, env: {} }).catch((e: unknown) => e)) as { code?: string; message?: string };
    expect(err.code).toBe('MAILGATE_ERR_CONFIG_INVALID');
    expect(err.message).toMatch(/store: must be text, not the number 42.*\(line 1, column 8\)/);
  });

  it('did-you-mean takes a swap of two letters as one edit and leaves unrelated names alone', () => {
    expect(distance('transfrom_tag', 'transform_tag')).toBe(1);
    expect(closest('transfrom_tag', ['transform_tag', 'source', 'dataset'])).toBe('transform_tag');
    expect(closest('concurency', ['concurrency', 'flush_ms'])).toBe('concurrency');
    expect(closest('xyzzy', ['source', 'dataset', 'name'])).toBeUndefined();
  });
});
