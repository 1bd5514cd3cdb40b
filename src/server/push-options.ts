/**
 * `server.push` (validated by the schema) into one listener's push budget and guard options,
 * with refusals counted in `mailgate_push_refused_total{listener, reason}`.
 */
import { parseLimit } from '../limits.js';
import { SERVER_DEFAULTS } from './defaults.js';
import type { Metrics } from '../metrics.js';
import { PushBudget } from './push-budget.js';
import type { PushGuardOptions } from './push-guard.js';

export interface PushServerOptions {
  /** Push requests open at once on one listener. */
  max_concurrent?: number;
  /** Body bytes the open push requests of one listener may hold between them. */
  max_bytes_in_flight?: number;
  /** Push requests one client address may have open at once on one listener. */
  max_per_client?: number;
  /** Retry-After of a refusal, in seconds. */
  retry_after_s?: number;
}

export function pushGuardOptions(o: PushServerOptions | undefined, listener: string, metrics: Metrics | undefined): PushGuardOptions {
  const budget = new PushBudget({
    maxRequests: parseLimit('server.push.max_concurrent', o?.max_concurrent, SERVER_DEFAULTS.push.max_concurrent),
    maxBytes: parseLimit('server.push.max_bytes_in_flight', o?.max_bytes_in_flight, SERVER_DEFAULTS.push.max_bytes_in_flight),
    maxPerClient: parseLimit('server.push.max_per_client', o?.max_per_client, SERVER_DEFAULTS.push.max_per_client),
  });
  return {
    budget,
    retryAfterS: parseLimit('server.push.retry_after_s', o?.retry_after_s, SERVER_DEFAULTS.push.retry_after_s),
    onRefused: (reason) => metrics?.pushRefused.inc({ listener, reason }),
  };
}
