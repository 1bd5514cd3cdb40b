/**
 * The console's data over a running service (ConsoleDeps of src/server/deps.ts): the item list
 * and detail from the store, the overview (counts, rates, AI units per day, adapter health,
 * owners) and the event bus, which follows the runtime's item events.
 */
import type { RouteConfig } from '../config/schema.js';
import type { Logger } from '../logger.js';
import type { RuntimeEvents } from '../pipeline/events.js';
import type { AdapterEntry } from '../runtime/adapters.js';
import { ConsoleEventBus } from '../server/console-events.js';
import type { AdapterHealthLine, ConsoleItemState, Overview, OverviewLine, RouteOverview } from '../server/console-types.js';
import type { ConsoleDeps } from '../server/deps.js';
import { dayOf, ITEM_LIST_STATES } from '../store/console.js';
import type { AttemptCount, ItemCount, Store } from '../store/types.js';
import { itemDetail } from './console-item.js';

/** Days of AI units the overview shows. */
export const OVERVIEW_DAYS = 14;
/**
 * How long the overview reuses its item counts: counting reads every item (seconds at a million
 * items), so a page refreshing the overview does not repeat it each time.
 */
export const COUNTS_TTL_MS = 10_000;
const DAY_MS = 86_400_000;

export interface ConsoleOptions {
  /** The store the console reads. */
  store: Store;
  routes: ReadonlyMap<string, RouteConfig>;
  adapters: readonly AdapterEntry[];
  logger: Logger;
  /** The runtime's event stream: its item events become the console's live updates. */
  events: RuntimeEvents;
}

const zeroCounts = (): Record<ConsoleItemState, number> =>
  Object.fromEntries(ITEM_LIST_STATES.map((s) => [s, 0])) as Record<ConsoleItemState, number>;

function delivered(counts: AttemptCount[], route: string): number {
  return counts
    .filter((c) => c.route === route && (c.outcome === 'delivered' || c.outcome === 'unchanged'))
    .reduce((n, c) => n + c.count, 0);
}

function days(now: number): string[] {
  return Array.from({ length: OVERVIEW_DAYS }, (_, i) => dayOf(now - (OVERVIEW_DAYS - 1 - i) * DAY_MS));
}

function routeLines(counts: ItemCount[]): OverviewLine[] {
  const lines = new Map<string, OverviewLine>();
  for (const c of counts) {
    const k = JSON.stringify([c.route, c.adapter]);
    const line = lines.get(k) ?? { route: c.route, adapter: c.adapter, counts: zeroCounts() };
    line.counts[c.state] += c.count;
    lines.set(k, line);
  }
  return [...lines.values()];
}

/** One line per adapter instance (an IMAP account each), as GET /api/status lists them. */
export function adapterLines(adapters: readonly AdapterEntry[]): AdapterHealthLine[] {
  const out: AdapterHealthLine[] = [];
  for (const e of adapters) {
    if (!e.adapter.health) {
      const lastError = e.error ? { code: e.error.code, message: e.error.message } : null;
      out.push({ kind: e.kind, name: e.name, state: e.state, healthy: e.state !== 'failed', last_error: lastError, detail: {} });
      continue;
    }
    for (const h of e.adapter.health()) {
      const { lastError: _ignored, ...detail } = (h.detail ?? {}) as Record<string, unknown>;
      out.push({ kind: e.kind, name: h.name, state: h.state, healthy: h.ok, last_error: h.lastError ?? null, detail });
    }
  }
  return out;
}

export function createConsole(o: ConsoleOptions): { deps: ConsoleDeps; bus: ConsoleEventBus } {
  const bus = new ConsoleEventBus(
    {
      async depth() {
        const out: Record<string, number> = {};
        for (const r of o.routes.keys()) out[r] = await o.store.outboxDepth(r);
        return out;
      },
      async newest(limit) {
        return (await o.store.listItems({ limit })).map((i) => ({ id: i.id, state: i.state }));
      },
    },
    { onError: (err) => o.logger.warn({ err }, 'console events: reading the store failed') },
  );
  bus.follow(o.events);

  let cached: { at: number; counts: Promise<ItemCount[]> } | undefined;
  function itemCounts(now: number): { at: number; counts: Promise<ItemCount[]> } {
    if (cached === undefined || now - cached.at >= COUNTS_TTL_MS) {
      const entry = { at: now, counts: o.store.itemCounts() };
      entry.counts.catch(() => {
        if (cached === entry) cached = undefined;
      });
      cached = entry;
    }
    return cached;
  }

  async function overview(): Promise<Overview> {
    const store = o.store;
    const now = Date.now();
    const dayList = days(now);
    const counted = itemCounts(now);
    const [counts, minute, hour, units, owners, stats] = await Promise.all([
      counted.counts,
      store.attemptCounts(new Date(now - 60_000)),
      store.attemptCounts(new Date(now - 3_600_000)),
      store.aiUnitsByDay(dayList[0]!),
      store.listOwners(),
      store.storeStats(),
    ]);
    const names = [...new Set([...o.routes.keys(), ...counts.map((c) => c.route)])];
    const routes = names.map((name): RouteOverview => {
      const r = o.routes.get(name);
      const total = zeroCounts();
      for (const c of counts) if (c.route === name) total[c.state] += c.count;
      const perDay = new Map(units.filter((u) => u.route === name).map((u) => [u.day, u.units]));
      return {
        route: name,
        mode: r?.mode ?? null,
        target: r === undefined ? null : ((r.mode === 'sync' ? r.source : r.dataset) ?? null),
        counts: total,
        outbox_depth: total.queued + total.retrying,
        delivered_last_minute: delivered(minute, name),
        delivered_last_hour: delivered(hour, name),
        dead_last_hour: hour.filter((c) => c.route === name && c.outcome === 'dead').reduce((n, c) => n + c.count, 0),
        ai_units_per_day: dayList.map((day) => ({ day, units: perDay.get(day) ?? 0 })),
      };
    });
    return {
      at: new Date(now).toISOString(),
      counts_at: new Date(counted.at).toISOString(),
      routes,
      lines: routeLines(counts),
      adapters: adapterLines(o.adapters),
      owners: owners.map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        started_at: w.startedAt,
        heartbeat_at: w.heartbeatAt,
        heartbeat_age_ms: w.heartbeatAgeMs,
      })),
      store: {
        kind: store.kind,
        bytes: stats.bytes,
        free_bytes: stats.freeBytes ?? null,
        auto_vacuum: stats.autoVacuum ?? null,
        oldest: { queued: stats.oldest.queued ?? null, delivered: stats.oldest.delivered ?? null, dead: stats.oldest.dead ?? null },
        full: store.health().full ?? null,
      },
    };
  }

  const deps: ConsoleDeps = {
    listItems: (q) => o.store.listItems(q),
    item: (id) => itemDetail(o.store, o.routes, id),
    raw: (id) => o.store.itemRaw(id),
    overview,
    events: bus,
  };
  return { deps, bus };
}
