/**
 * Flags that are missing or do not go together are usage errors (exit 2, as docs/cli.md says),
 * not failed messages (exit 1): `import` without --source or --config exited 1.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/program.js';
import { CLAIM_LEASE_BOUNDS } from '../../src/limits.js';

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

  // Regression: `serve` took 1000..3600000 and `import` any integer >= 1; one rule now, CLAIM_LEASE_BOUNDS.
  const { min, max } = CLAIM_LEASE_BOUNDS;
  describe.each([
    ['serve', []],
    ['import', ['x.eml', '--dry-run']],
  ])('%s --lease-ms', (command, rest) => {
    it.each([String(min - 1), String(max + 1), '0', '-5', '1.5', '1e4', 'soon'])(
      'refuses %s with exit 2, naming the flag and the range',
      async (value) => {
        const run = await cli(command, ...rest, '--lease-ms', value);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(`option '--lease-ms <ms>' argument '${value}' is invalid. expected an integer from ${min} to ${max}`);
      },
    );
  });

  it('route flags beside --config exit 2', async () => {
    const run = await cli('import', 'x.eml', '--dry-run', '--config', 'mailgate.yaml', '--source', 'p/s');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--source cannot be combined with --config');
  });
});
