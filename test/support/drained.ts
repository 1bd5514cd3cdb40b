import type { Config } from '../../src/config/schema.js';

/** The configuration with a shutdown drain bound of `ms` (`delivery.drain_ms`; 0: `stop()` leaves what is queued at once). */
export const drained = (config: Readonly<Config>, ms = 0): Readonly<Config> => ({
  ...config,
  delivery: { ...config.delivery, drain_ms: ms },
});
