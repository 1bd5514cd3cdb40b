/** SQLite billing counters: cumulative per route (`route_counters`) and AI units per UTC day (`ai_units_daily`). */
import type Database from 'better-sqlite3';
import { statement } from './statements.js';
import { checkAiUnits, countByRoute, ROUTE_COUNTER_COLUMNS, routeCountersFromRow, type CounterName } from '../common.js';
import { dayOf } from '../console.js';
import type { Backend } from '../compose.js';
import type { CounterStore, RouteCounters } from '../types.js';

export class SqliteCounters implements Backend<CounterStore> {
  private readonly bumpStmts = new Map<CounterName, Database.Statement>();
  private readonly bumpDaily: Database.Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {
    for (const name of ['enqueued', 'delivered', 'unchanged', 'dead_lettered', 'ai_units'] as const) {
      this.bumpStmts.set(
        name,
        db.prepare(
          `INSERT INTO route_counters (route, ${name}) VALUES (?, ?)
         ON CONFLICT (route) DO UPDATE SET ${name} = ${name} + excluded.${name}`,
        ),
      );
    }
    this.bumpDaily = db.prepare(
      `INSERT INTO ai_units_daily (route, day, units) VALUES (?, ?, ?)
       ON CONFLICT (route, day) DO UPDATE SET units = units + excluded.units`,
    );
  }

  /** Adds `n` to a per-route counter (call inside the caller's transaction). */
  bump(route: string, name: CounterName, n: number): void {
    if (n !== 0) this.bumpStmts.get(name)?.run(route, n);
  }

  /** Adds to each route's counter its number of entries in `routes` (call inside the caller's transaction). */
  bumpEach(routes: Iterable<string>, name: CounterName): void {
    for (const [route, n] of countByRoute(routes)) this.bump(route, name, n);
  }

  /** AI units to the route's counter and to its day (call inside the caller's transaction). */
  addUnits(route: string, units: number): void {
    this.bump(route, 'ai_units', checkAiUnits(units));
    if (units !== 0) this.bumpDaily.run(route, dayOf(this.now()), units);
  }

  addAiUnits(route: string, n: number): void {
    this.db.transaction(() => this.addUnits(route, n)).immediate();
  }

  counters(route?: string): RouteCounters[] {
    const rows = statement(
      this.db,
      `SELECT ${ROUTE_COUNTER_COLUMNS} FROM route_counters
       ${route === undefined ? '' : 'WHERE route = @route'} ORDER BY route`,
    ).all(route === undefined ? {} : { route }) as Array<Record<string, number | string>>;
    return rows.map(routeCountersFromRow);
  }
}
