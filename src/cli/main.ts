#!/usr/bin/env node
/** The `mailgate` executable. */
import { readFileSync } from 'node:fs';
import { isGatewayError } from '../errors.js';
import { runCli } from './program.js';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

runCli(process.argv, { stdout: process.stdout, stderr: process.stderr }, packageVersion()).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const text = isGatewayError(err) ? `${err.code}: ${err.message}` : err instanceof Error ? (err.stack ?? err.message) : String(err);
    process.stderr.write(`mailgate: ${text}\n`);
    process.exitCode = 1;
  },
);
