/**
 * PostgreSQL billing counters: cumulative per route and AI units per UTC day (`ai_units_daily`).
 * A route's counters are one row per counter in `route_counts` (so that intake's commits and
 * delivery's never wait for each other's row lock), plus the totals `route_counters` held before
 * migration 11; reading adds both.
 */
import type pg from 'pg';
import { checkAiUnits, routeCountersFromRow, type CounterName } from '../common.js';
import type { Backend } from '../compose.js';
import type { CounterStore, RouteCounters } from '../types.js';
import { nowParam, pgNow, withTransaction, type PgClock, type Queryable } from './db.js';

/** Additions to counters: counter name → route → amount. */
export type CounterBumps = Partial<Record<CounterName, Map<string, number>>>;

/** Adds to per-route counters in one statement; rows in sorted order so concurrent writers never deadlock. */
export async function bumpCounters(db: Queryable, bumps: CounterBumps): Promise<void> {
  const rows: Array<[string, string, number]> = [];
  for (const [name, counts] of Object.entries(bumps)) {
    for (const [route, n] of counts) if (n !== 0) rows.push([route, name, n]);
  }
  if (rows.length === 0) return;
  rows.sort(([r1, c1], [r2, c2]) => (r1 < r2 ? -1 : r1 > r2 ? 1 : c1 < c2 ? -1 : c1 > c2 ? 1 : 0));
  await db.query(
    `INSERT INTO route_counts (route, counter, n) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ON CONFLICT (route, counter) DO UPDATE SET n = route_counts.n + excluded.n`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
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

const NAMES: readonly CounterName[] = ['enqueued', 'delivered', 'unchanged', 'dead_lettered', 'ai_units'];

/** Each route's counters: the rows per counter beside the columns written before migration 11, added up. */
const COUNTERS_SQL = `SELECT route, ${NAMES.map((n) => `SUM(${n}) AS ${n}`).join(', ')} FROM (
    SELECT route, ${NAMES.join(', ')} FROM route_counters
    UNION ALL SELECT route, ${NAMES.map((n) => `CASE WHEN counter = '${n}' THEN n ELSE 0 END`).join(', ')} FROM route_counts) r`;

export class PgCounters implements Backend<CounterStore> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: PgClock,
  ) {}

  addAiUnits(route: string, n: number): Promise<void> {
    return withTransaction(this.pool, async (client) => {
      await bumpCounters(client, { ai_units: new Map([[route, checkAiUnits(n)]]) });
      await addDailyUnits(client, route, n, nowParam(this.clock));
    });
  }

  async counters(route?: string): Promise<RouteCounters[]> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `${COUNTERS_SQL} ${route === undefined ? '' : 'WHERE route = $1'} GROUP BY route ORDER BY route`,
      route === undefined ? [] : [route],
    );
    return rows.map(routeCountersFromRow);
  }
}
