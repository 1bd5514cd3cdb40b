/**
 * `mailgate import` killed with SIGKILL at random points and restarted until it completes:
 * every message is created exactly once in the API and billed once, on SQLite and PostgreSQL.
 * The CLI runs from dist/ (npm run build first); the emulator runs in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { startEmulator, type StartedEmulator } from '../support/emulator.js';
import { createTestDatabase } from '../support/postgres.js';
import { importWithKills, prng, writeMbox, type KillPoint } from './support.js';

const MESSAGES = 2000;
const SEEDS = [11, 23, 47];
const KILLS = 3;

let dir: string;
let mbox: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-crash-'));
  mbox = join(dir, 'archive.mbox');
  writeMbox(mbox, MESSAGES);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function crashRun(seed: number, storeUrl: (seed: number) => Promise<string>): Promise<void> {
  // Requests of 100 documents that take 20 ms each: delivery spans many requests, so the
  // kills below land between them however fast the rest of the import runs.
  const emu: StartedEmulator = await startEmulator({ autoCreateSources: true, faults: [{ endpoint: 'sync-raw-emails', delay_ms: 20 }] });
  try {
    const store = await storeUrl(seed);
    const args = [
      'import',
      '--yes',
      mbox,
      '--api-url',
      emu.url,
      '--token',
      emu.token,
      '--source',
      `acme/crash-${seed}`,
      '--store',
      store,
      '--lease-ms',
      '1500',
      '--batch-size',
      '100',
      '--json',
    ];
    const createdAtKill: number[] = [];
    const rand = prng(seed);
    const created = () => emu.emulator.stats().comments;
    // First a kill at a random time (start-up, reading, parsing or storing) or, on a machine fast
    // enough to reach delivery sooner, once the API holds a random part of the first half of the
    // comments (a time alone can fall after a fast import's end); then kills when the API has
    // created a random number of further comments (mid-delivery).
    const points: Array<() => KillPoint> = [
      () => {
        const ms = 200 + Math.floor(rand() * 1200);
        const target = 1 + Math.floor(rand() * (MESSAGES / 2));
        return { ms, ready: () => created() >= target };
      },
      ...Array.from({ length: KILLS - 1 }, () => () => {
        const target = created() + 1 + Math.floor(rand() * (MESSAGES - created() - 1));
        return { ready: () => created() >= target };
      }),
    ];
    const { result, killed } = await importWithKills(args, dir, points, () => createdAtKill.push(created()));
    expect(result.code, result.stderr).toBe(0);
    expect(killed).toBe(KILLS);
    // At least one kill landed in the middle of delivery.
    expect(
      createdAtKill.some((n) => n > 0 && n < MESSAGES),
      String(createdAtKill),
    ).toBe(true);
    const stats = emu.emulator.stats();
    expect(stats.comments).toBe(MESSAGES);
    expect(stats.ai_units).toBe(MESSAGES);
    const s = await openStore(store);
    try {
      expect(await s.outboxDepth()).toBe(0);
      expect(await s.listDeadLetters({ limit: 10 })).toEqual([]);
      const [counters] = await s.counters('import');
      expect(counters!.enqueued).toBe(MESSAGES);
      expect(counters!.delivered + counters!.unchanged).toBe(MESSAGES);
    } finally {
      await s.close();
    }
  } finally {
    await emu.stop();
  }
}

describe('import survives SIGKILL (SQLite)', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: every message created once, billed once`, async () => {
      await crashRun(seed, async (s) => `sqlite:${join(dir, `sqlite-${s}`, 'mailgate.db')}`);
    }, 120_000);
  }
});

describe('import survives SIGKILL (PostgreSQL)', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: every message created once, billed once`, async () => {
      await crashRun(seed, () => createTestDatabase('mailgate_crash'));
    }, 120_000);
  }
});
