/**
 * Flags that are missing or do not go together are usage errors (exit 2, as docs/cli.md says),
 * not failed messages (exit 1): `import` without --source or --config exited 1.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

async function cli(...args: string[]): Promise<{ code: number; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCli(['node', 'mailgate', ...args], { stdout, stderr });
  return { code, stderr: stderr.text };
}

describe('flag usage errors', () => {
  it('import without --source or --config exits 2 and says what to give', async () => {
    const run = await cli('import', 'x.eml', '--dry-run');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('MAILGATE_ERR_CLI_USAGE: give --config FILE --route NAME');
  });

  it('a bad --threshold exits 2', async () => {
    const run = await cli('import', 'x.eml', '--dry-run', '--mode', 'predict', '--dataset', 'p/d', '--threshold', 'high');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--threshold must be a number');
  });

  it('route flags beside --config exit 2', async () => {
    const run = await cli('import', 'x.eml', '--dry-run', '--config', 'mailgate.yaml', '--source', 'p/s');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--source cannot be combined with --config');
  });
});
