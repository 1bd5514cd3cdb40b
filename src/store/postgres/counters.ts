/** PostgreSQL billing counters: cumulative per route (`route_counters`) and AI units per UTC day (`ai_units_daily`). */
import type pg from 'pg';
import { checkAiUnits, ROUTE_COUNTER_COLUMNS, routeCountersFromRow, type CounterName } from '../common.js';
import type { Backend } from '../compose.js';
import type { CounterStore, RouteCounters } from '../types.js';
import { nowParam, pgNow, withTransaction, type PgClock, type Queryable } from './db.js';

/** Adds to per-route counters; routes in sorted order so concurrent writers never deadlock. */
export async function bumpCounters(db: Queryable, name: CounterName, counts: Map<string, number>): Promise<void> {
  const routes = [...counts.keys()].filter((r) => counts.get(r) !== 0).sort();
  if (routes.length === 0) return;
  await db.query(
    `INSERT INTO route_counters (route, ${name}) SELECT * FROM unnest($1::text[], $2::bigint[])
     ON CONFLICT (route) DO UPDATE SET ${name} = route_counters.${name} + excluded.${name}`,
    [routes, routes.map((r) => counts.get(r) ?? 0)],
  );
}

/** Adds AI units to today's (UTC, by the clock parameter or the server's) counter of a route. */
export async function addDailyUnits(db: Queryable, route: string, units: number, now: Date | null): Promise<void> {
  if (units === 0) return;
  await db.query(
    `INSERT INTO ai_units_daily (route, day, units) VALUES ($1, to_char(${pgNow(3)} AT TIME ZONE 'UTC', 'YYYY-MM-DD'), $2)
     ON CONFLICT (route, day) DO UPDATE SET units = ai_units_daily.units + excluded.units`,
    [route, units, now],
  );
}

export class PgCounters implements Backend<CounterStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  addAiUnits(route: string, n: number): Promise<void> {
    return withTransaction(this.pool, async (client) => {
      await bumpCounters(client, 'ai_units', new Map([[route, checkAiUnits(n)]]));
      await addDailyUnits(client, route, n, nowParam(this.clock));
    });
  }

  async counters(route?: string): Promise<RouteCounters[]> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `SELECT ${ROUTE_COUNTER_COLUMNS} FROM route_counters
       ${route === undefined ? '' : 'WHERE route = $1'} ORDER BY route`,
      route === undefined ? [] : [route],
    );
    return rows.map(routeCountersFromRow);
  }
}
