/**
 * Telling a dead owner from a live one on this host: a pid that no longer exists, or that now
 * names a process started at another time (pid reuse), is gone; an owner of another host is
 * never judged by pid here. Then the runtime's owner handle: registered, reaping a dead owner's
 * claims at start, deregistering (releasing its own) on stop — on a real SQLite store.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { hostIdentity, isGoneHere, processStart, startOwner } from '../../src/runtime/owner.js';
import { openStore } from '../../src/store/index.js';
import { input } from '../contract/store.case.js';

const linux = process.platform === 'linux';

describe('isGoneHere', () => {
  it('a live process of this host is not gone; with another start time (a reused pid) it is', () => {
    const self = { host: hostIdentity(), pid: process.pid, procStart: processStart(process.pid) };
    expect(isGoneHere(self)).toBe(false);
    if (linux) {
      expect(self.procStart).toMatch(/^\d+$/);
      expect(isGoneHere({ ...self, procStart: `${self.procStart!}1` })).toBe(true);
    }
    expect(isGoneHere({ host: 'elsewhere.example', pid: 999_999_999 })).toBe(false);
  });

  it('a process that exited is gone', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const pid = child.pid!;
    const owner = { host: hostIdentity(), pid, procStart: processStart(pid) };
    expect(isGoneHere(owner)).toBe(false);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    expect(isGoneHere(owner)).toBe(true);
  });
});

describe('hostIdentity', () => {
  it('names the PID namespace beside the hostname on Linux: an owner of another namespace is not judged by its pid here', () => {
    if (linux) expect(hostIdentity()).toMatch(/ pidns:\d+$/);
    // A live process of a container sharing this hostname: its pid names nothing (or another process) here.
    const other = { host: `${hostIdentity().replace(/ pidns:\d+$/, '')} pidns:1`, pid: 2 ** 30 };
    expect(isGoneHere(other)).toBe(false);
    expect(isGoneHere({ ...other, host: hostIdentity() })).toBe(true);
  });
});

describe('startOwner', () => {
  it('registers, takes back the claims of a dead owner of this host at once, and deregisters on stop', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      await store.enqueue([input('r', 1), input('r', 2)]);
      // A process of this host that is gone: its pid names no process (pids stay below 2^22 on Linux).
      await store.registerOwner({ id: 'dead', host: hostIdentity(), pid: 2 ** 30, heartbeatMs: 5_000 });
      await store.claim('r', 10, 'dead', 600_000);
      const handle = await startOwner({ store, id: 'me', heartbeatMs: 5_000, logger: createLogger({ level: 'silent' }) });
      expect((await store.listOwners()).map((o) => [o.id, o.pid])).toEqual([['me', process.pid]]);
      expect(await store.claim('r', 10, 'me', 600_000)).toHaveLength(2);
      await handle.stop();
      expect(await store.listOwners()).toEqual([]);
      expect(await store.claim('r', 10, 'next', 600_000)).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
