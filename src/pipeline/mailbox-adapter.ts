/**
 * The adapter of one API mailbox (src/pipeline/mailbox-loop.ts): runs its loop, reports its
 * health line, serves the connection's notification endpoint (the first mailbox of an entry),
 * carries its controls to the mailbox guard, and applies the after-delivery action to the
 * origins it read. A kind gives its action (`apply`) and may finish a failure of its own
 * (`settle`); every other failure leaves the actions due.
 */
import { controlsOf } from '../controls/schema.js';
import type { Logger } from '../logger.js';
import type { MailboxLoop, MailboxLoopOptions } from './mailbox-loop.js';
import type { ConnectionPacer } from './pacer.js';
import type { Adapter, AdapterHealth, AfterDeliveryResult, Intake, Origin, PushEndpoint } from './types.js';
import { WakeWatch, type WakeBoard } from './wake-board.js';

export abstract class MailboxAdapter<R extends MailboxLoop = MailboxLoop> implements Adapter {
  abstract readonly kind: string;
  readonly mode = 'pull';
  readonly controls: { enabled: boolean; disableAfterMs: number };
  /** Aborted when the adapter stops: ends the loop and any action in flight. */
  protected readonly stop = new AbortController();

  constructor(
    readonly name: string,
    readonly runner: R,
    private readonly receiver: PushEndpoint | undefined,
    /** The after-delivery action's name (`none`: nothing to apply). */
    private readonly actionName: string,
  ) {
    this.controls = { enabled: runner.opts.controls.enabled, disableAfterMs: runner.opts.controls.disable_after_ms };
  }

  /** Applies the action to `mine` (this mailbox's origins); throws on failure. */
  protected abstract apply(mine: Origin[]): Promise<void>;

  /** A failure that retrying cannot fix: the result to finish with (logged here); undefined leaves the actions due. */
  protected settle(_err: unknown, _mine: Origin[], _skipped: Origin[]): AfterDeliveryResult | undefined {
    return undefined;
  }

  async start(sink: Intake, signal: AbortSignal): Promise<void> {
    await this.runner.run(sink, AbortSignal.any([signal, this.stop.signal]));
  }

  health(): AdapterHealth[] {
    return [this.runner.line()];
  }

  /** Actions deferred while the mailbox was not read here or failing run once it starts again. */
  onActionsReady(listener: () => void): void {
    this.runner.onReady = listener;
  }

  endpoints(): PushEndpoint[] {
    return this.receiver ? [this.receiver] : [];
  }

  /**
   * Applies the mailbox's action to its origins (others are skipped). Not read here (another
   * replica holds the lease, or stopped): deferred, as is everything after a failure (logged).
   */
  async afterDelivery(origins: Origin[]): Promise<AfterDeliveryResult> {
    const mine = origins.filter((o) => o.adapter === this.kind && o.instance === this.name);
    const skipped = origins.filter((o) => !mine.includes(o));
    if (mine.length === 0 || this.actionName === 'none') return { applied: mine, skipped };
    if (!this.runner.active) return { applied: [], deferred: mine, skipped };
    try {
      await this.apply(mine);
      return { applied: mine, skipped };
    } catch (err) {
      const settled = this.settle(err, mine, skipped);
      if (settled !== undefined) return settled;
      const code = (err as { code?: string }).code ?? this.runner.kind.unavailable;
      const message = `after-delivery ${this.actionName} failed: ${(err as Error).message}; the actions stay due`;
      this.runner.opts.log.warn({ code, count: mine.length }, message);
      return { applied: [], deferred: mine, skipped };
    }
  }
}

/** What the mailboxes of one entry share: the entry's logger, the process's pacer, the wake board (with notifications). */
export interface MailboxEntryContext {
  /** The caller's logger: each mailbox logs through a child naming its kind, its instance (`<entry>/<user>`) and its user. */
  logger: Logger;
  pacer: ConnectionPacer;
  /** Set when the entry has notifications and the process a store to signal through. */
  board?: WakeBoard | undefined;
}

/** The loop options every kind's mailbox takes (src/pipeline/mailbox-loop.ts), for mailbox `m` of an entry of `kind`. */
export function mailboxLoopOptions(
  kind: string,
  entry: { name: string; route: string; poll_interval_ms: number; wake_check_ms: number },
  m: Parameters<typeof controlsOf>[0] & { user: string },
  ctx: MailboxEntryContext,
): MailboxLoopOptions & { instance: string } {
  const instance = `${entry.name}/${m.user}`;
  return {
    entry,
    user: m.user,
    instance,
    log: ctx.logger.child({ adapter: kind, instance, mailbox: m.user }),
    ...(ctx.board ? { board: new WakeWatch(ctx.board, `${kind}:${instance}`, entry.wake_check_ms) } : {}),
    paced: (signal) => ctx.pacer.acquire(signal),
    controls: controlsOf(m),
  };
}
