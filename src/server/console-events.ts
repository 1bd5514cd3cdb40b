/**
 * The console's in-process event bus: what `GET /api/events` streams. It follows the runtime's
 * event stream (items stored by intake and push intake, moved by delivery, replayed), fans
 * items out to the open streams and, while at least one is open, ticks a status line. With no
 * stream open it does nothing (no query, no timer).
 * Writes of other replicas sharing a PostgreSQL store are not seen here.
 */
import { parseLimit } from '../limits.js';
import type { RuntimeEvents } from '../pipeline/events.js';
import type { ConsoleItemState, ItemEvent, StatusEvent } from './console-types.js';

export type ConsoleEvent = { type: 'item'; data: ItemEvent } | { type: 'status'; data: StatusEvent };
export type ConsoleListener = (event: ConsoleEvent) => void;

export interface ConsoleFeed {
  /** Queued items per route, for the status ticks. */
  depth(): Promise<Record<string, number>>;
  /** The newest items (at most `limit`), newest first: new items are found by id after a store write. */
  newest(limit: number): Promise<Array<{ id: number; state: ConsoleItemState }>>;
}

export interface ConsoleBusOptions {
  /** Status tick interval in ms (default 5000). */
  statusEveryMs?: number;
  /** Items one scan for new items reports at most (default 500): a larger burst shows its newest. */
  scanLimit?: number;
  onError?: (err: unknown) => void;
}

const STATUS_EVERY_MS = 5_000;
const SCAN_LIMIT = 500;

export class ConsoleEventBus {
  private readonly listeners = new Set<ConsoleListener>();
  private readonly statusEveryMs: number;
  private readonly scanLimit: number;
  private timer: NodeJS.Timeout | undefined;
  /** The newest item id reported (or seen when the first stream opened). */
  private lastId: number | undefined;
  /** Resolves once `lastId` holds the newest id at the time the first stream opened. */
  private ready: Promise<void> = Promise.resolve();
  private scanning: Promise<void> | undefined;
  private rescan = false;
  private closed = false;

  constructor(
    private readonly feed: ConsoleFeed,
    private readonly options: ConsoleBusOptions = {},
  ) {
    this.statusEveryMs = parseLimit('statusEveryMs', options.statusEveryMs, STATUS_EVERY_MS);
    this.scanLimit = parseLimit('scanLimit', options.scanLimit, SCAN_LIMIT);
  }

  get active(): boolean {
    return this.listeners.size > 0;
  }

  /** Adds a listener; returns its removal. The first one starts the status ticks. */
  subscribe(listener: ConsoleListener): () => void {
    if (this.closed) return () => {};
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** Listens to the runtime's item and pause events; returns the removal of its listeners. */
  follow(events: RuntimeEvents): () => void {
    const off = [
      events.on('item:stored', (e) => {
        if (e.outcome === 'duplicate') return;
        // Pull intake's writes do not return ids: the new items are found by a scan.
        if (e.id === undefined) this.itemsAdded();
        else this.item(e.id, e.outcome);
      }),
      events.on('item:delivered', (e) => this.item(e.id, 'delivered')),
      events.on('item:unchanged', (e) => this.item(e.id, 'unchanged')),
      events.on('item:retrying', (e) => this.item(e.id, 'retrying')),
      events.on('item:dead', (e) => this.item(e.id, 'dead')),
      events.on('item:replayed', (e) => this.item(e.id, e.state)),
      // A route that stops or starts delivering: a status line at once, so the console's banner follows.
      events.on('route:paused', () => this.statusNow()),
      events.on('route:resumed', () => this.statusNow()),
    ];
    return () => off.forEach((f) => f());
  }

  /** An item changed state (or was stored with a known id). */
  item(id: number, state: ConsoleItemState): void {
    if (!this.active) return;
    if (this.lastId !== undefined && id > this.lastId) this.lastId = id;
    this.emit({ type: 'item', data: { id, state } });
  }

  /** Sends a status line now (between the ticks). */
  statusNow(): void {
    if (this.active) void this.tick();
  }

  /** Items were stored whose ids the writer does not know: scan for them (coalesced). */
  itemsAdded(): void {
    if (!this.active) return;
    if (this.scanning) {
      this.rescan = true;
      return;
    }
    this.scanning = this.scan().finally(() => {
      this.scanning = undefined;
      if (this.rescan) {
        this.rescan = false;
        this.itemsAdded();
      }
    });
  }

  /** Ends every stream's subscription (shutdown); later subscriptions are refused. */
  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stop();
  }

  private emit(event: ConsoleEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (err) {
        this.options.onError?.(err);
      }
    }
  }

  private async scan(): Promise<void> {
    try {
      await this.ready;
      const rows = await this.feed.newest(this.scanLimit);
      const after = this.lastId ?? 0;
      const fresh = rows.filter((r) => r.id > after).reverse();
      for (const r of fresh) this.item(r.id, r.state);
      const top = rows[0]?.id;
      if (top !== undefined && (this.lastId === undefined || top > this.lastId)) this.lastId = top;
    } catch (err) {
      this.options.onError?.(err);
    }
  }

  private start(): void {
    // The newest id now: items stored from here on are reported as new.
    this.ready = this.feed
      .newest(1)
      .then((rows) => {
        if (this.lastId === undefined) this.lastId = rows[0]?.id ?? 0;
      })
      .catch((err: unknown) => this.options.onError?.(err));
    this.timer = setInterval(() => void this.tick(), this.statusEveryMs);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.lastId = undefined;
  }

  /** The status line now (also sent to each stream when it opens). */
  async status(): Promise<StatusEvent> {
    return { at: new Date().toISOString(), outbox_depth: await this.feed.depth() };
  }

  private async tick(): Promise<void> {
    try {
      const data = await this.status();
      if (this.active) this.emit({ type: 'status', data });
    } catch (err) {
      this.options.onError?.(err);
    }
  }
}
