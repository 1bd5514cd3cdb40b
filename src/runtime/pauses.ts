/**
 * Which routes cannot deliver right now: the one place that follows `route:paused` and
 * `route:resumed`. The service's /api/status, the gauge `mailgate_route_paused`, the console and
 * the shutdown drain read it; each pause and resume is also written to the store's controls
 * (`route_pauses`) so that `mailgate status`, another process and a restart see a paused route
 * too, and `mailgate routes resume` (which deletes the stored pause) lifts it.
 */
import type { RuntimeEvents } from '../pipeline/events.js';
import type { ControlStore, RoutePauseRow } from '../store/types.js';

export interface RoutePause {
  route: string;
  target: string;
  /** The MAILGATE_* code of the refusal (401 → MAILGATE_ERR_API_UNAUTHORIZED, 402 → …_QUOTA, …). */
  code: string;
  message: string;
  /** When this pause began (kept while it is extended). */
  since: Date;
  /** When claims start again unless the pause is extended. */
  until: Date;
}

/** A pause as stored and as /api/status shows it. */
export function pauseJson(p: RoutePause): { code: string; message: string; since: string; until: string; target: string } {
  return { code: p.code, message: p.message, since: p.since.toISOString(), until: p.until.toISOString(), target: p.target };
}

/** A stored pause as the runtime keeps it. */
export function pauseOf(row: RoutePauseRow): RoutePause {
  return {
    route: row.route,
    target: row.target,
    code: row.code,
    message: row.message,
    since: new Date(row.since),
    until: new Date(row.until),
  };
}

type PauseStore = Pick<ControlStore, 'pauseRoute' | 'resumeRoute' | 'listRoutePauses'>;

export class RoutePauses {
  private readonly paused = new Map<string, RoutePause>();
  /** The store write of each route's last pause or resume (a check for a lifted pause waits for it). */
  private readonly writes = new Map<string, Promise<unknown>>();

  constructor(
    events: RuntimeEvents,
    private readonly store?: PauseStore,
  ) {
    events.on('route:paused', (e) => {
      const pause = { route: e.route, target: e.target, code: e.code, message: e.message, since: e.since, until: e.until };
      this.paused.set(e.route, pause);
      return this.write(e.route, () => store?.pauseRoute({ route: e.route, ...pauseJson(pause) }));
    });
    events.on('route:resumed', (e) => {
      this.paused.delete(e.route);
      return this.write(e.route, () => store?.resumeRoute(e.route));
    });
  }

  private write(route: string, fn: () => Promise<unknown> | undefined): Promise<void> {
    const next = (this.writes.get(route) ?? Promise.resolve()).catch(() => undefined).then(fn);
    this.writes.set(route, next);
    return next.then(() => undefined);
  }

  /** The route's pause, when it is paused. */
  get(route: string): RoutePause | undefined {
    return this.paused.get(route);
  }

  /** Every paused route. */
  list(): RoutePause[] {
    return [...this.paused.values()];
  }

  /** Pauses recorded in the store (by this process or another, running or gone). */
  async stored(): Promise<RoutePause[]> {
    if (this.store === undefined) return [];
    return (await this.store.listRoutePauses()).map(pauseOf);
  }

  /** Deletes a stored pause this process does not hold (one an earlier run left). */
  async forget(route: string): Promise<void> {
    if (this.paused.has(route)) return;
    await this.store?.resumeRoute(route);
  }

  /** True when the route's pause was lifted by hand (`mailgate routes resume`: its stored pause is gone). */
  async lifted(route: string): Promise<boolean> {
    if (this.store === undefined || !this.paused.has(route)) return false;
    await this.writes.get(route)?.catch(() => undefined);
    if (!this.paused.has(route)) return false;
    return !(await this.store.listRoutePauses()).some((p) => p.route === route);
  }
}
