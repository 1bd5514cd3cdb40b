import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MAIN, requireBuild, ROOT } from './support/dist.js';

describe('mailgate emulator', () => {
  it('listens on a free port, answers with the token, and closes on SIGTERM', async () => {
    requireBuild();
    const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', '--token', 'secret-token'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      child.stdout.setEncoding('utf8');
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: string) => {
          out += d;
          const m = /listening on (http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`emulator exited early with ${code}: ${out}`)));
      });
      const unauthorized = await fetch(`${url}/api/v1/sources/acme/support/sync-raw-emails`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      expect(unauthorized.status).toBe(401);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('requires a token', async () => {
    requireBuild();
    const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0'], { cwd: ROOT, stdio: 'ignore' });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
  });
});
