/**
 * An in-memory intake: records every accepted batch and checkpoint (a real object standing
 * in for the durable store at the adapter level). It can be told to fail the next N batches.
 */
import type { AcceptOptions, Accepted, Checkpoint, Inbound, Intake } from '../../src/pipeline/types.js';

export class MemorySink implements Intake {
  readonly accepted: Inbound[] = [];
  readonly checkpoints = new Map<string, Checkpoint['value']>();
  /** Every checkpoint write in order (to prove it never moves on a failed batch). */
  readonly history: Array<{ key: string; value: Checkpoint['value']; count: number }> = [];
  failures = 0;
  failed = 0;
  /** Called before a batch is accepted (e.g. to cut the connection mid-sync). */
  onAccept: ((batch: Inbound[]) => void | Promise<void>) | undefined;

  /** As intake: batches are stored in call order, and one queued behind a failed batch fails too. */
  private storing: Promise<void> = Promise.resolve();

  accept(batch: Inbound[], options: AcceptOptions = {}): Promise<Accepted[]> {
    const done = this.storing.then(() => this.acceptNow(batch, options.checkpoint));
    this.storing = done;
    done.catch(() => {
      if (this.storing === done) this.storing = Promise.resolve();
    });
    return done.then(() => batch.map((_, i) => ({ id: String(this.accepted.length - batch.length + i + 1), duplicate: false })));
  }

  async item(): Promise<undefined> {
    return undefined;
  }

  private async acceptNow(batch: Inbound[], checkpoint?: Checkpoint): Promise<void> {
    await this.onAccept?.(batch);
    if (this.failures > 0) {
      this.failures -= 1;
      this.failed += 1;
      throw new Error('intake store unavailable');
    }
    this.accepted.push(...batch);
    if (checkpoint !== undefined) {
      this.checkpoints.set(checkpoint.key, structuredClone(checkpoint.value));
      this.history.push({ key: checkpoint.key, value: structuredClone(checkpoint.value), count: batch.length });
    }
  }

  async checkpoint(key: string): Promise<Checkpoint['value'] | undefined> {
    return this.checkpoints.get(key);
  }

  /** Distinct messages by folder/UIDVALIDITY/UID, and how many were accepted more than once. */
  tally(): { distinct: number; twice: number } {
    const seen = new Map<string, number>();
    for (const m of this.accepted) {
      const k = `${m.origin.details['folder']}/${m.origin.details['uidValidity']}/${m.origin.details['uid']}`;
      seen.set(k, (seen.get(k) ?? 0) + 1);
    }
    return { distinct: seen.size, twice: [...seen.values()].filter((n) => n > 1).length };
  }

  subjects(): string[] {
    return this.accepted.map((m) => /^Subject: (.*)$/m.exec(m.raw.toString('latin1'))?.[1]?.trim() ?? '');
  }
}

/**
 * Polls `check` until it holds; rejects once `timeoutMs` has passed without it (a generous
 * deadline on the wait, not a speed assertion). Default 45 s, inside the 60 s test timeout.
 */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 45_000, what = 'the condition'): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
