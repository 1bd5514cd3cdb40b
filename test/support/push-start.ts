/**
 * Push adapters get their intake in `start()`, as the runtime hands it over; a test that calls
 * an endpoint directly starts the adapter on its own intake first (it keeps it until the
 * adapter is started again on another one).
 */
import type { Adapter, Intake, PushEndpoint, PushRequest, PushResponse } from '../../src/pipeline/types.js';

export function startOn(adapter: Adapter, intake: Intake): void {
  void adapter.start(intake, new AbortController().signal);
}

/** An endpoint of `adapter` whose `handle` takes the intake to use, as the endpoint contract did before. */
export function endpointOn(
  adapter: Adapter,
  endpoint: PushEndpoint,
): PushEndpoint & { handle(req: PushRequest, intake: Intake, params: Record<string, string>): Promise<PushResponse> } {
  return {
    ...endpoint,
    handle: (req: PushRequest, intake: Intake, params: Record<string, string> = {}) => {
      startOn(adapter, intake);
      return endpoint.handle(req, params);
    },
  } as never;
}
