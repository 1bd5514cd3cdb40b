/**
 * Waits of the three-replica test that follow progress instead of a fixed deadline: on a loaded
 * machine (load average ~20 on two cores) every step is slow but moves, and a test bounded by the
 * sum of fixed deadlines timed out while nothing was wrong; a stuck step still fails, naming
 * itself, once its measure has not moved for a while.
 */
import type { ServeProcess } from './serve-process.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How long a measure may stay where it is before the wait fails. */
export const STALL_MS = 60_000;
/** Between two reads of a measure (each read asks every replica for its status). */
const POLL_MS = 250;

/**
 * Waits until `measure()` reaches `target`. Fails when its best value so far has not risen for
 * `stallMs`, with `diagnose()` in the error.
 */
export async function untilReached(
  measure: () => Promise<number> | number,
  target: number,
  what: string,
  diagnose: () => string,
  stallMs = STALL_MS,
): Promise<void> {
  let best = Number.NEGATIVE_INFINITY;
  let since = Date.now();
  for (;;) {
    const now = await measure();
    if (now >= target) return;
    if (now > best) {
      best = now;
      since = Date.now();
    } else if (Date.now() - since > stallMs) {
      throw new Error(`no progress towards ${what} for ${stallMs} ms: at ${best} of ${target}\n${diagnose()}`);
    }
    await sleep(POLL_MS);
  }
}

/**
 * Waits for `check` at most `boundMs` (a bound the product promises, such as a takeover within
 * the lease TTL + 5 s), reading it every POLL_MS: each read asks every replica for its status, and
 * asking ten times a second took CPU from the replicas taking over.
 */
export async function within(check: () => Promise<boolean>, what: string, boundMs: number, diagnose: () => string): Promise<void> {
  const end = Date.now() + boundMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(POLL_MS);
  }
  throw new Error(`${what}: not within ${boundMs} ms\n${diagnose()}`);
}

/**
 * Sends SIGTERM and waits for the exit as long as the process keeps writing its log (it logs
 * each adapter and lease it stops); once silent for `stallMs`, kills it and fails with its last lines.
 */
export async function stopGracefully(
  serve: ServeProcess,
  name: string,
  stallMs = 30_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  serve.child.kill('SIGTERM');
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void serve.exit.then((e) => (exited = e));
  let printed = -1;
  let since = Date.now();
  while (exited === undefined) {
    const now = serve.stdout().length + serve.stderr().length;
    if (now !== printed) {
      printed = now;
      since = Date.now();
    } else if (Date.now() - since > stallMs) {
      serve.child.kill('SIGKILL');
      await serve.exit;
      const tail = (serve.stderr() + serve.stdout()).trimEnd().split('\n').slice(-40).join('\n');
      throw new Error(`${name} did not stop: silent for ${stallMs} ms after SIGTERM (killed). Last lines:\n${tail}`);
    }
    await sleep(POLL_MS);
  }
  return exited;
}
