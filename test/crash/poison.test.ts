/**
 * Poison messages: one whose parse the process never survives (killed from here while it is
 * parsed, three times running) is set aside after `parsing.poison_after` attempts — counted in
 * the store before each parse — as a dead letter with its raw bytes and MAILGATE_ERR_INTAKE_POISON.
 * The other messages of its batch go on.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../cli/support/dist.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'mailgate-poison-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const mail = (id: string, hook?: 'crash' | 'hang') =>
  `${hook ? `X-Mailgate-Internal-Test-Hook: ${hook}\r\n` : ''}From: a@example.com\r\nSubject: ${id}\r\nMessage-ID: <${id}@poison.test>\r\n\r\nbody ${id}\r\n`;

function inbox(name: string, hook: 'crash' | 'hang'): string {
  const path = join(dir, name);
  mkdirSync(path);
  writeFileSync(join(path, '1-before.eml'), mail(`${name}-before`));
  writeFileSync(join(path, '2-poison.eml'), mail(`${name}-poison`, hook));
  writeFileSync(join(path, '3-after.eml'), mail(`${name}-after`));
  return path;
}

describe('poison messages', () => {
  it('a message the process never survives: killed while it is parsed three times running, the fourth run sets it aside and finishes', async () => {
    const db = join(dir, 'kill.db');
    const path = inbox('kill', 'hang');
    const child = join(ROOT, 'test', 'crash', 'poison-child.mjs');
    const dist = join(ROOT, 'dist');
    const attemptsOf = (): Promise<number> => readAttempts(db);
    for (let run = 1; run <= 3; run++) {
      const p = spawn(process.execPath, [child, dist, `sqlite:${db}`, path], { stdio: ['ignore', 'pipe', 'pipe'] });
      const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
      const end = Date.now() + 60_000;
      while ((await attemptsOf().catch(() => 0)) < run) {
        if (Date.now() > end) throw new Error(`run ${run}: the poison message was never counted`);
        await new Promise((r) => setTimeout(r, 50));
      }
      p.kill('SIGKILL');
      await exited;
    }
    const last = spawn(process.execPath, [child, dist, `sqlite:${db}`, path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    last.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => last.on('exit', (c) => resolve(c)));
    expect(code).toBe(0);
    const result = JSON.parse(out) as { counts: Array<{ status: string; count: number }>; dead: Array<{ code: string }> };
    expect(result.dead.map((d) => d.code)).toEqual(['MAILGATE_ERR_INTAKE_POISON']);
    expect(result.counts.find((c) => c.status === 'queued')?.count).toBe(2);
  }, 240_000);
});

/** The parse attempts counted for the `kill` inbox's poison message (0 before the first). */
async function readAttempts(file: string): Promise<number> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare("SELECT attempts AS n FROM parse_attempts WHERE route = 'support' AND key LIKE '%2-poison.eml%'").get() as
      | { n: number }
      | undefined;
    return row?.n ?? 0;
  } finally {
    db.close();
  }
}
