/**
 * The store as the service's pieces use it, reporting item writes to the console's event bus:
 * every path that stores or moves an item (intake, push intake, delivery, replay) goes through
 * these methods, so the console hears of them without each caller knowing about it. The
 * report happens after the write resolved and never throws into the writer.
 */
import type { ConsoleEventBus } from '../server/console-events.js';
import type { Store } from '../store/types.js';

type Reporter = (store: Store, args: unknown[], result: unknown) => void;

function reporters(bus: ConsoleEventBus): Partial<Record<keyof Store, Reporter>> {
  return {
    enqueue: (_s, _args, result) => {
      const r = result as { queued: number; deadLettered: number };
      if (r.queued + r.deadLettered > 0) bus.itemsAdded();
    },
    enqueueKeyed: (_s, _args, result) => {
      for (const o of result as Array<{ id: number; duplicate: boolean; status: string }>) {
        if (!o.duplicate) bus.item(o.id, o.status === 'dead' ? 'dead' : 'queued');
      }
    },
    markDelivered: (_s, args) => {
      const [ids, info] = args as [number[], { outcome: 'delivered' | 'unchanged' }];
      for (const id of ids) bus.item(id, info.outcome);
    },
    scheduleRetry: (_s, args) => {
      const [ids] = args as [number | number[]];
      for (const id of Array.isArray(ids) ? ids : [ids]) bus.item(id, 'retrying');
    },
    deadLetter: (_s, args, result) => {
      if (result === true) bus.item(args[0] as number, 'dead');
    },
    replayDeadLetter: (_s, _args, result) => {
      const r = result as { id: number; status: 'queued' | 'dead' };
      bus.item(r.id, r.status);
    },
  };
}

/** `store` with its item writes reported to `bus` (only while a console stream listens). */
export function reportingStore(store: Store, bus: ConsoleEventBus): Store {
  const report = reporters(bus);
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      const r = report[key as keyof Store];
      if (r === undefined || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return async (...args: unknown[]) => {
        const result = (await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args)) as unknown;
        if (bus.active) {
          try {
            r(target, args, result);
          } catch {
            // A console that cannot follow must never fail a write.
          }
        }
        return result;
      };
    },
  });
}
