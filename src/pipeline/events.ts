/**
 * What the runtime tells its observers: one typed event stream (the style of graphile-worker's
 * `WorkerEvents`). Intake, push intake, delivery, replay, the API client and the adapters emit;
 * metrics, the console's live updates, the CLI's progress and the logs subscribe. Nothing wraps
 * the store or delivery to watch them.
 *
 * An event is emitted after what it reports is durable (an item's write has committed), once,
 * in the order it happened. A listener runs synchronously inside `emit`; its exception (or the
 * rejection of a promise it returns) is reported to `onListenerError` and never reaches the
 * pipeline that emitted.
 */
import type { AttemptInfo } from '../api/client.js';
import type { FilteredReport } from './types.js';

/** The states an adapter goes through (`standby`: a pull adapter whose mailbox lease another replica holds). */
export type AdapterState = 'starting' | 'running' | 'finished' | 'failed' | 'stopped' | 'standby' | 'disabled';

/** Where an item event comes from: its outbox item, its route and the adapter of its origin. */
export interface ItemEventBase {
  /** The outbox id; absent on `item:stored` from pull intake, whose write does not return ids. */
  id?: number;
  route: string;
  /** The adapter kind of the item's origin (`imap`, `files`, `webhook`…): the `adapter` metric label. */
  adapter: string;
}

export interface RuntimeEventMap {
  /**
   * A message handed to intake or push intake is durable: `queued` for delivery, `dead` (it
   * could not be read or parsed; its raw bytes are kept), or `duplicate` (its route holds it
   * already; nothing was stored). Emitted once per message handed in.
   */
  'item:stored': ItemEventBase & {
    key: string;
    outcome: 'queued' | 'dead' | 'duplicate';
    via: 'pull' | 'push';
    error?: { code: string; message: string };
  };
  /** A mailbox's filter left a message out (src/controls/): never stored, parsed or billed. */
  'item:filtered': FilteredReport;
  /** The API accepted the item. */
  'item:delivered': ItemEventBase & { id: number };
  /** The ledger or the API found the item's text already there: nothing was billed. */
  'item:unchanged': ItemEventBase & { id: number };
  /** The item is due again in `delayMs` (`attempts`: the attempts made so far, this one included). */
  'item:retrying': ItemEventBase & { id: number; code: string; message: string; attempts: number; delayMs: number };
  /**
   * Delivery gave the item up: the API `rejected` the document, or its `attempts` ran out
   * (delivery.max_item_attempts). Intake's dead letters are `item:stored` with outcome `dead`.
   */
  'item:dead': ItemEventBase & { id: number; code: string; message: string; reason: 'rejected' | 'attempts' };
  /** A dead letter was parsed again and put back: `queued`, or still `dead` with the new reason. */
  'item:replayed': ItemEventBase & { id: number; state: 'queued' | 'dead' };
  /** One claimed batch of a route was settled: what it came to, and the AI units the API confirmed. */
  'delivery:batch': {
    route: string;
    target: string;
    delivered: number;
    unchanged: number;
    rejected: number;
    retried: number;
    aiUnits: number;
    aiUnitsEstimated: number;
  };
  /** One attempt of the API client (retries included), successful or not. */
  'api:attempt': AttemptInfo;
  /**
   * Delivery stopped claiming for the route: the API refused the credentials, the target or
   * the request itself (`code`). `since`: when this pause began (kept while it is extended);
   * `until`: when claims start again unless the pause is extended.
   */
  'route:paused': { route: string; target: string; code: string; message: string; since: Date; until: Date; pauseMs: number };
  /** The route's pause ran out: its items are claimed again. */
  'route:resumed': { route: string; target: string; since: Date; pausedMs: number };
  /**
   * A mailbox was disabled (by command, by its configuration, or after failing longer than its
   * `disable_after_ms`: `reason` sync_error or quota, with the error kind) or enabled again.
   */
  'mailbox:state': { mailbox: string; enabled: boolean; reason?: string; errorKind?: string; errorCode?: string; message?: string };
  /** An adapter instance changed state. */
  'adapter:state': { kind: string; name: string; state: AdapterState; error?: { code: string; message: string } };
}

export type RuntimeEventType = keyof RuntimeEventMap;
export type RuntimeListener<K extends RuntimeEventType> = (event: RuntimeEventMap[K]) => void | Promise<void>;

export interface RuntimeEventsOptions {
  /** A listener threw or rejected (default: ignored). Must not throw itself. */
  onListenerError?: (err: unknown, type: RuntimeEventType) => void;
}

export class RuntimeEvents {
  private readonly listeners = new Map<RuntimeEventType, Set<RuntimeListener<never>>>();
  onListenerError: ((err: unknown, type: RuntimeEventType) => void) | undefined;

  constructor(options: RuntimeEventsOptions = {}) {
    this.onListenerError = options.onListenerError;
  }

  /** Adds a listener; returns its removal. */
  on<K extends RuntimeEventType>(type: K, listener: RuntimeListener<K>): () => void {
    let set = this.listeners.get(type);
    if (set === undefined) this.listeners.set(type, (set = new Set()));
    set.add(listener as RuntimeListener<never>);
    return () => void set.delete(listener as RuntimeListener<never>);
  }

  /** Whether anything listens to `type` (an emitter may skip building the event). */
  has(type: RuntimeEventType): boolean {
    return (this.listeners.get(type)?.size ?? 0) > 0;
  }

  emit<K extends RuntimeEventType>(type: K, event: RuntimeEventMap[K]): void {
    const set = this.listeners.get(type);
    if (set === undefined || set.size === 0) return;
    for (const listener of [...set]) {
      try {
        const result = (listener as RuntimeListener<K>)(event);
        if (result instanceof Promise) result.catch((err: unknown) => this.failed(err, type));
      } catch (err) {
        this.failed(err, type);
      }
    }
  }

  private failed(err: unknown, type: RuntimeEventType): void {
    try {
      this.onListenerError?.(err, type);
    } catch {
      // Reporting a listener's failure must not fail the emitter either.
    }
  }
}
