/**
 * Admin endpoints that exist only on the emulator (no authentication, never counted):
 *   GET    /_emulator/stats    requests per endpoint and status, AI units billed, comments stored
 *   GET    /_emulator/faults   the current fault plan (with the remaining `times`)
 *   POST   /_emulator/faults   `{rules: FaultRule[]}` replaces the plan
 *   DELETE /_emulator/faults   clears the plan
 *   POST   /_emulator/reset    forgets all state, counters and faults
 */
import type { FastifyInstance } from 'fastify';
import { isGatewayError } from '../../errors.js';
import type { AppContext } from '../app.js';
import { errorBody } from '../http.js';
import type { FaultRule } from '../types.js';

export function resetAll(ctx: AppContext): void {
  ctx.state.reset();
  ctx.faults.set([]);
}

export function registerAdminRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/_emulator/stats', async () => ctx.state.stats());

  app.get('/_emulator/faults', async () => ({ status: 'ok', rules: ctx.faults.list() }));

  app.post('/_emulator/faults', async (req, reply) => {
    const rules = (req.body as { rules?: unknown } | undefined)?.rules;
    try {
      ctx.faults.set(rules as FaultRule[]);
    } catch (err) {
      if (isGatewayError(err)) return reply.code(400).send(errorBody(err.message));
      throw err;
    }
    return { status: 'ok', rules: ctx.faults.list() };
  });

  app.delete('/_emulator/faults', async () => {
    ctx.faults.set([]);
    return { status: 'ok' };
  });

  app.post('/_emulator/reset', async () => {
    resetAll(ctx);
    return { status: 'ok' };
  });
}
