/**
 * `server.push` (validated by the schema) into one listener's push budget and guard options,
 * with refusals counted in `mailgate_push_refused_total{listener, reason}`.
 */
import {
  DEFAULT_PUSH_MAX_BYTES_IN_FLIGHT,
  DEFAULT_PUSH_MAX_CONCURRENT,
  DEFAULT_PUSH_MAX_PER_CLIENT,
  DEFAULT_PUSH_RETRY_AFTER_S,
  parseLimit,
} from '../limits.js';
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
    maxRequests: parseLimit('server.push.max_concurrent', o?.max_concurrent, DEFAULT_PUSH_MAX_CONCURRENT),
    maxBytes: parseLimit('server.push.max_bytes_in_flight', o?.max_bytes_in_flight, DEFAULT_PUSH_MAX_BYTES_IN_FLIGHT),
    maxPerClient: parseLimit('server.push.max_per_client', o?.max_per_client, DEFAULT_PUSH_MAX_PER_CLIENT),
  });
  return {
    budget,
    retryAfterS: parseLimit('server.push.retry_after_s', o?.retry_after_s, DEFAULT_PUSH_RETRY_AFTER_S),
    onRefused: (reason) => metrics?.pushRefused.inc({ listener, reason }),
  };
}
