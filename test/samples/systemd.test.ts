/**
 * samples/systemd/mailgate.service: `mailgate serve` under the usual sandboxing. systemd's own
 * checker verifies the unit and scores its exposure where systemd-analyze exists (Debian ships it
 * with systemd); the settings themselves are asserted everywhere.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const UNIT = readFileSync(join(ROOT, 'samples/systemd/mailgate.service'), 'utf8');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The unit's settings, a key given twice keeping both values. */
function settings(unit: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (m) out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
  }
  return out;
}

describe('the systemd unit in samples/', () => {
  const s = settings(UNIT);
  const one = (key: string) => s.get(key)?.at(-1);

  it('runs `mailgate serve` with a configuration as its own user, the data directory its only writable place', () => {
    expect(one('ExecStart')).toMatch(/\/node \S+\/dist\/cli\/mailgate\.js serve --config \/etc\/mailgate\/mailgate\.yaml/);
    expect(one('User')).toBe('mailgate');
    expect(readFileSync(join(ROOT, 'samples/systemd/mailgate.sysusers'), 'utf8')).toMatch(/^u mailgate - /m);
    expect(one('StateDirectory')).toBe('mailgate');
    expect(one('WorkingDirectory')).toBe('/var/lib/mailgate');
    expect(one('ReadWritePaths')).toBe('/var/lib/mailgate');
    expect(one('ProtectSystem')).toBe('strict');
    for (const key of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp', 'PrivateDevices', 'ProtectKernelTunables', 'ProtectKernelModules'])
      expect(one(key), key).toBe('yes');
    expect(one('CapabilityBoundingSet')).toBe('');
    expect(one('RestrictAddressFamilies')).toBe('AF_INET AF_INET6 AF_UNIX');
    expect(s.get('SystemCallFilter')).toContain('@system-service');
    // V8 compiles to memory it then executes: this setting would stop Node at start.
    expect(s.has('MemoryDenyWriteExecute')).toBe(false);
  });

  it('gives a stop more time than the drain and the SMTP close (30 s each by default)', () => {
    expect(one('KillSignal')).toBe('SIGTERM');
    expect(Number(/^(\d+)$/.exec(one('TimeoutStopSec') ?? '')?.[1])).toBeGreaterThan(60);
  });

  it('passes systemd-analyze verify, and its exposure score is "OK" or better, where systemd-analyze exists', () => {
    const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      // No systemd on this machine: the settings above are all that can be checked here.
      expect((probe.error as NodeJS.ErrnoException).code).toBe('ENOENT');
      return;
    }
    // The unit as installed, but pointing at this checkout's Node and build (verify wants an executable).
    const dir = mkdtempSync(join(tmpdir(), 'mailgate-unit-'));
    dirs.push(dir);
    const unit = join(dir, 'mailgate.service');
    writeFileSync(unit, UNIT.replace(/^ExecStart=\S+ \/opt\/mailgate\//m, `ExecStart=${process.execPath} ${ROOT}/`));
    const verify = spawnSync('systemd-analyze', ['verify', '--man=no', unit], { encoding: 'utf8' });
    expect(verify.stderr).toBe('');
    expect(verify.status).toBe(0);
    const security = spawnSync('systemd-analyze', ['security', '--offline=yes', unit], { encoding: 'utf8' });
    const score = /Overall exposure level for mailgate\.service: (\d+\.\d+) (\w+)/.exec(security.stdout);
    expect(score, security.stdout + security.stderr).not.toBeNull();
    expect(Number(score![1])).toBeLessThanOrEqual(2);
    expect(score![2]).toBe('OK');
  });
});
