/** Runs `mailgate` in-process with captured output. */
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The compiled CLI: its parse pool needs the compiled worker (`npm test` builds first). */
const PROGRAM = pathToFileURL(join(import.meta.dirname, '..', '..', 'dist', 'src', 'cli', 'program.js')).href;

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

export async function mailgate(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(args, false);
}

/** As `mailgate`, with stderr a terminal wide enough for the whole progress line (bar and counters). */
export async function mailgateOnTerminal(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(args, true);
}

async function run(args: string[], terminal: boolean): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new Capture();
  const stderr = Object.assign(new Capture(), terminal ? { isTTY: true, columns: 160 } : {});
  const { runCli } = (await import(PROGRAM)) as typeof import('../../src/cli/program.js');
  const code = await runCli(['node', 'mailgate', ...args], { stdout, stderr });
  return { code, stdout: stdout.text, stderr: stderr.text };
}
