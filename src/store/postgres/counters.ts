/**
 * PostgreSQL billing counters: cumulative per route and AI units per UTC day (`ai_units_daily`).
 * A route's counters are one row per counter in `route_counts` (so that intake's commits and
 * delivery's never wait for each other's row lock), plus the totals `route_counters` held before
 * migration 11; reading adds both.
 */
import type pg from 'pg';
import { byCodeUnits, checkAiUnits, routeCountersFromRow, type CounterName } from '../common.js';
import type { Backend } from '../compose.js';
import type { CounterStore, RouteCounters } from '../types.js';
import { nowParam, pgNow, retryRolledBack, type PgClock, type Queryable } from './db.js';

/** How every write to `route_counts` adds to a counter that has a row already. */
const ADD_TO_COUNT = 'ON CONFLICT (route, counter) DO UPDATE SET n = route_counts.n + excluded.n';

/** Additions to counters: counter name → route → amount. */
export type CounterBumps = Partial<Record<CounterName, Map<string, number>>>;

/** Adds to per-route counters in one statement; rows in sorted order so concurrent writers never deadlock. */
export async function bumpCounters(db: Queryable, bumps: CounterBumps): Promise<void> {
  const rows: Array<[string, string, number]> = [];
  for (const [name, counts] of Object.entries(bumps)) {
    for (const [route, n] of counts) if (n !== 0) rows.push([route, name, n]);
  }
  if (rows.length === 0) return;
  rows.sort(([r1, c1], [r2, c2]) => byCodeUnits(r1, r2) || byCodeUnits(c1, c2));
  await db.query(
    `INSERT INTO route_counts (route, counter, n) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
     ${ADD_TO_COUNT}`,
    [rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
  );
}

/**
 * A step of the enqueue's statement: adds the rows it inserted (`ins`: route, status) to their
 * routes' `enqueued` and `dead_lettered` counters, in sorted order.
 */
export const COUNT_INSERTED = `INSERT INTO route_counts (route, counter, n)
    SELECT route, CASE WHEN status = 'dead' THEN 'dead_lettered' ELSE 'enqueued' END AS counter, COUNT(*) FROM ins
    GROUP BY 1, 2 ORDER BY 1, 2
    ${ADD_TO_COUNT}`;

/**
 * A step of a delivery outcome's statement: adds the rows it changed (`u`: route) to their routes'
 * counter named by parameter `$counter`, in sorted order.
 */
export const countChanged = (counter: number): string => `INSERT INTO route_counts (route, counter, n)
    SELECT route, $${counter}::text, COUNT(*) FROM u GROUP BY route ORDER BY route
    ${ADD_TO_COUNT}`;

/**
 * Adds AI units to a route's counter and to its counter of today (UTC, by the clock parameter or
 * the server's), as two steps of one statement: the route in parameter `$first`, the units in the
 * next, the clock in `$now`.
 */
export function aiUnitSteps(first: number, now: number): string[] {
  const [route, units] = [`$${first}::text`, `$${first + 1}::bigint`];
  return [
    `INSERT INTO route_counts (route, counter, n) VALUES (${route}, 'ai_units', ${units})
     ${ADD_TO_COUNT}`,
    `INSERT INTO ai_units_daily (route, day, units) VALUES (${route}, to_char(${pgNow(now)} AT TIME ZONE 'UTC', 'YYYY-MM-DD'), ${units})
     ON CONFLICT (route, day) DO UPDATE SET units = ai_units_daily.units + excluded.units`,
  ];
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

  async addAiUnits(route: string, n: number): Promise<void> {
    if (checkAiUnits(n) === 0) return;
    const [counter, daily] = aiUnitSteps(1, 3);
    await retryRolledBack(() => this.pool.query(`WITH c AS (${counter}) ${daily}`, [route, n, nowParam(this.clock)]));
  }

  async counters(route?: string): Promise<RouteCounters[]> {
    const { rows } = await this.pool.query<Record<string, string>>(
      `${COUNTERS_SQL} ${route === undefined ? '' : 'WHERE route = $1'} GROUP BY route ORDER BY route`,
      route === undefined ? [] : [route],
    );
    return rows.map(routeCountersFromRow);
  }
}
