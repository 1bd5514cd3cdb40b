/**
 * A kind that lives only in the tests: `postbox` takes a message as the body of a POST and
 * answers 200 once it is durable — the smallest push kind. Its retryable answer is the status
 * the catalogue gives the intake's refusal (503).
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { defineKind } from '../../../src/config/kind.js';
import { CORE_ERRORS, defineErrors, httpStatusOf, isGatewayError } from '../../../src/errors.js';
import type { KindImplementation } from '../../../src/pipeline/kind.js';
import type { Adapter, Intake, PushResponse } from '../../../src/pipeline/types.js';

const schema = z.strictObject({
  name: z.string().min(1).describe('Instance name: the path /postbox/<name>.'),
  route: z.string().min(1).describe('Route of its messages.'),
});
type PostboxEntry = z.output<typeof schema>;

function create(entry: PostboxEntry): Adapter {
  let intake: Intake | undefined;
  const handle = async (body: Buffer): Promise<PushResponse> => {
    if (intake === undefined) return { status: 503, body: { error: { code: 'MAILGATE_ERR_INTAKE_UNAVAILABLE', message: 'not started' } } };
    try {
      const [accepted] = await intake.accept(
        [
          {
            raw: body,
            key: `sha256:${createHash('sha256').update(body).digest('hex')}`,
            origin: {
              adapter: 'postbox',
              instance: entry.name,
              id: `sha256:${createHash('sha256').update(body).digest('hex')}`,
              details: {},
            },
            route: entry.route,
            receivedAt: new Date(),
          },
        ],
        { whenFull: 'refuse' },
      );
      return { status: 200, body: { id: accepted!.id, duplicate: accepted!.duplicate } };
    } catch (err) {
      if (!isGatewayError(err)) throw err;
      return { status: httpStatusOf(err.code, CORE_ERRORS), body: { error: { code: err.code, message: err.message } } };
    }
  };
  return {
    kind: 'postbox',
    name: entry.name,
    mode: 'push',
    start: async (given, signal) => {
      intake = given;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    },
    endpoints: () => [{ method: 'POST', path: `/postbox/${entry.name}`, bodyLimit: 1024 * 1024, handle: (req) => handle(req.body) }],
  };
}

export const implementation: KindImplementation<PostboxEntry> = { create };

export const kind = defineKind({
  kind: 'postbox',
  mode: 'push',
  schema: async () => schema,
  description: 'Messages posted as the request body (tests only).',
  errors: defineErrors({}),
  load: async () => ({ implementation }),
});
