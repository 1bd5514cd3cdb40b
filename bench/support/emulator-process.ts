/**
 * The API emulator as a process of its own, as the API would be (its CPU then counts apart from
 * mailgate's), with one source created for the run to write to.
 */
import { spawn } from 'node:child_process';

export interface EmulatorProcess {
  url: string;
  pid: number;
  stop: () => void;
  /** Everything the emulator wrote on stdout so far (its request log with `--log`). */
  output: () => string;
}

/** Starts `cli emulator` in `dir` with `token`, and creates the source `source` (`owner/name`). */
export async function startEmulatorProcess(
  cli: string,
  dir: string,
  token: string,
  source: string,
  extraArgs: string[] = [],
): Promise<EmulatorProcess> {
  const child = spawn(process.execPath, [cli, 'emulator', '--port', '0', '--token', token, ...extraArgs], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let text = '';
  const url = await new Promise<string>((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
  });
  const res = await fetch(`${url}/api/v1/sources/${source}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{"source":{}}',
  });
  if (!res.ok) throw new Error(`cannot create the source: HTTP ${res.status}`);
  return { url, pid: child.pid!, stop: () => void child.kill('SIGTERM'), output: () => text };
}
