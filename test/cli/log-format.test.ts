/** `--log-format` on the commands that log, and its configuration equivalents (`log_format`, MAILGATE_LOG_FORMAT). */
import { Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { logFormatOption } from '../../src/cli/options.js';
import { runCli } from '../../src/cli/program.js';
import { loadConfig } from '../../src/config/load.js';
import { isGatewayError } from '../../src/errors.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = new Capture();
  const code = await runCli(['node', 'mailgate', ...args], { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const COMMANDS_THAT_LOG = [['serve'], ['import', 'x.eml'], ['dlq', 'replay', '1'], ['emulator', '--port', '0', '--token', 't', '--log']];

describe('--log-format', () => {
  it('takes json or pretty', () => {
    for (const value of ['json', 'pretty']) {
      const cmd = logFormatOption(new Command().exitOverride()).parse(['--log-format', value], { from: 'user' });
      expect(cmd.opts()['logFormat']).toBe(value);
    }
    expect(logFormatOption(new Command()).parse([], { from: 'user' }).opts()['logFormat']).toBeUndefined();
  });

  it('is a usage error (exit 2) with anything else, on every command that logs', async () => {
    for (const args of COMMANDS_THAT_LOG) {
      const run = await cli(...args, '--log-format', 'xml');
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain("option '--log-format <format>' argument 'xml' is invalid. expected one of json, pretty");
    }
  });

  it('is listed in the help of every command that logs', async () => {
    for (const args of COMMANDS_THAT_LOG) {
      const run = await cli(...args.slice(0, args[0] === 'dlq' ? 2 : 1), '--help');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('--log-format <format>');
    }
  });
});

describe('log_format in the configuration', () => {
  it('defaults to auto; MAILGATE_LOG_FORMAT sets it', () => {
    expect(loadConfig({ env: {} }).log_format).toBe('auto');
    expect(loadConfig({ env: { MAILGATE_LOG_FORMAT: 'pretty' } }).log_format).toBe('pretty');
    expect(loadConfig({ env: { MAILGATE_LOG_FORMAT: 'json' } }).log_format).toBe('json');
  });

  it('refuses an unknown format with the configuration error code', () => {
    let code: string | undefined;
    try {
      loadConfig({ env: { MAILGATE_LOG_FORMAT: 'xml' } });
    } catch (err) {
      code = isGatewayError(err) ? err.code : 'not a GatewayError';
    }
    expect(code).toBe('MAILGATE_ERR_CONFIG_INVALID');
  });
});
