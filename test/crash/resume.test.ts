/**
 * `mailgate import` killed with SIGKILL mid-delivery, then run again: the second run claims
 * what the dead process held at once — the lease is 10 minutes, far beyond the test's timeout,
 * so a run that waited it out would fail the test — and every message is created once and
 * billed once. The second run reports as AI units what the API billed it, not the documents
 * the dead process had already been billed for. `mailgate status` and `dlq list` answer beside
 * the running import; status lists it as a registered owner. On SQLite and PostgreSQL; the CLI runs from dist/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { runCli as spawnCli, writeMbox } from './support.js';

const MESSAGES = 2000;
/** Ten minutes: never waited out within the test's timeout. */
const LEASE_MS = 600_000;
const TIMEOUT_MS = 120_000;

let dir: string;
let mbox: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-resume-'));
  mbox = join(dir, 'archive.mbox');
  writeMbox(mbox, MESSAGES, 'resume');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs of this test still alive when it failed (a rerun waiting out the lease) are killed. */
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
function runCli(args: string[], cwd: string): ReturnType<typeof spawnCli> {
  const run = spawnCli(args, cwd);
  children.push(run.child);
  return run;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, exited: Promise<unknown>): Promise<boolean> {
  let done = false;
  void exited.then(() => (done = true));
  while (!done && !check()) await sleep(5);
  return !done;
}

interface Summary {
  delivered: number;
  unchanged: number;
  aiUnits: number;
  aiUnitsEstimated: number;
}

async function crashAndResume(tag: string, store: string): Promise<void> {
  // Requests of 50 documents that take 300 ms each (two in flight): delivery spans seconds, so
  // `status` runs and the kill lands while requests are in flight.
  const emu = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', delay_ms: 300 }] });
  try {
    const args = [
      'import',
      '--yes',
      mbox,
      '--api-url',
      emu.url,
      '--token',
      emu.token,
      '--source',
      `acme/${tag}`,
      '--store',
      store,
      '--lease-ms',
      String(LEASE_MS),
      '--batch-size',
      '50',
      '--json',
    ];
    const created = () => emu.emulator.stats().comments;
    const first = runCli(args, dir);
    expect(await until(() => created() >= 100, first.exited), 'the first run ended before it was killed').toBe(true);

    // Beside the running import: status and dlq list answer; status lists it as an owner of claims.
    const [status, dlq] = await Promise.all([
      runCli(['status', '--store', store, '--json'], dir).exited,
      runCli(['dlq', 'list', '--store', store, '--json'], dir).exited,
    ]);
    expect(dlq.code, dlq.stderr).toBe(0);
    expect(JSON.parse(dlq.stdout)).toEqual([]);
    expect(status.code, status.stderr).toBe(0);
    const owners = (JSON.parse(status.stdout) as { owners: Array<{ pid: number; heartbeatAgeMs: number }> }).owners;
    expect(owners.map((o) => o.pid)).toEqual([first.child.pid]);

    first.child.kill('SIGKILL');
    await first.exited;
    await sleep(100); // a request the emulator was still delaying is applied (and billed) now
    const billedBefore = emu.emulator.stats().ai_units;
    expect(billedBefore).toBeGreaterThan(0);
    expect(billedBefore).toBeLessThan(MESSAGES);
    const s = await openStore(store);
    try {
      // The dead process never deregistered: its claims are still held, for 10 minutes by lease.
      expect((await s.listOwners()).map((o) => o.pid)).toEqual([first.child.pid]);
    } finally {
      await s.close();
    }

    const second = await runCli(args, dir).exited;
    expect(second.code, second.stderr).toBe(0);
    const stats = emu.emulator.stats();
    expect(stats.comments).toBe(MESSAGES);
    expect(stats.ai_units).toBe(MESSAGES);
    const summary = JSON.parse(second.stdout) as Summary;
    // AI units of the second run: exactly what the API billed it.
    expect(summary.aiUnits).toBe(MESSAGES - billedBefore);
    expect(summary.aiUnitsEstimated).toBeGreaterThanOrEqual(summary.aiUnits);
    const after = await openStore(store);
    try {
      expect(await after.outboxDepth()).toBe(0);
      expect(await after.listOwners()).toEqual([]);
      const [counters] = await after.counters('import');
      expect(counters).toMatchObject({ enqueued: MESSAGES, aiUnits: MESSAGES - (summary.aiUnitsEstimated - summary.aiUnits) });
      expect(counters!.delivered + counters!.unchanged).toBe(MESSAGES);
    } finally {
      await after.close();
    }
  } finally {
    await emu.stop();
  }
}

describe('import killed mid-delivery resumes at once (lease 10 minutes)', () => {
  it(
    'SQLite',
    async () => {
      await crashAndResume('resume-sqlite', `sqlite:${join(dir, 'sqlite', 'mailgate.db')}`);
    },
    TIMEOUT_MS,
  );

  it(
    'PostgreSQL',
    async () => {
      await crashAndResume('resume-pg', await createTestDatabase('mailgate_resume'));
    },
    TIMEOUT_MS,
  );
});
