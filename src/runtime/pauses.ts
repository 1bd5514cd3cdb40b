/**
 * Which routes cannot deliver right now: the one place that follows `route:paused` and
 * `route:resumed`. The service's /api/status, the gauge `mailgate_route_paused`, the console and
 * the shutdown drain read it; each pause and resume is also written to the store (a
 * `route-pause:<route>` entry beside the checkpoints) so that `mailgate status`, another
 * process, shows a paused route too.
 */
import type { RuntimeEvents } from '../pipeline/events.js';
import type { Store } from '../store/types.js';

export interface RoutePause {
  route: string;
  target: string;
  /** The MAILGATE_* code of the refusal (401 → MAILGATE_ERR_API_UNAUTHORIZED, …). */
  code: string;
  message: string;
  /** When this pause began (kept while it is extended). */
  since: Date;
  /** When claims start again unless the pause is extended. */
  until: Date;
}

/** The store key of a route's pause state. */
export const PAUSE_KEY_PREFIX = 'route-pause:';

/** A pause as stored and as /api/status shows it. */
export function pauseJson(p: RoutePause): { code: string; message: string; since: string; until: string; target: string } {
  return { code: p.code, message: p.message, since: p.since.toISOString(), until: p.until.toISOString(), target: p.target };
}

export class RoutePauses {
  private readonly paused = new Map<string, RoutePause>();

  constructor(events: RuntimeEvents, store?: Pick<Store, 'setCheckpoint'>) {
    events.on('route:paused', (e) => {
      const pause = { route: e.route, target: e.target, code: e.code, message: e.message, since: e.since, until: e.until };
      this.paused.set(e.route, pause);
      return store?.setCheckpoint(`${PAUSE_KEY_PREFIX}${e.route}`, { paused: true, ...pauseJson(pause) });
    });
    events.on('route:resumed', (e) => {
      this.paused.delete(e.route);
      return store?.setCheckpoint(`${PAUSE_KEY_PREFIX}${e.route}`, { paused: false, resumedAt: new Date().toISOString() });
    });
  }

  /** The route's pause, when it is paused. */
  get(route: string): RoutePause | undefined {
    return this.paused.get(route);
  }

  /** Every paused route. */
  list(): RoutePause[] {
    return [...this.paused.values()];
  }
}
