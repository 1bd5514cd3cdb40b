/**
 * A kind that lives only in the tests: `sequence` reads a numbered run of generated messages,
 * two at a time, each pair with the checkpoint of the next one — the smallest pull kind. It is
 * one definition, as every kind is, and joins the adapter contract with one line.
 */
import { z } from 'zod';
import { defineKind } from '../../../src/config/kind.js';
import { defineErrors } from '../../../src/errors.js';
import type { KindImplementation } from '../../../src/pipeline/kind.js';
import type { Adapter, Inbound } from '../../../src/pipeline/types.js';
import { message } from '../adapter.case.js';

const schema = z.strictObject({
  name: z.string().min(1).describe('Instance name.'),
  route: z.string().min(1).describe('Route of its messages.'),
  messages: z.number().int().min(1).max(1000).describe('How many messages its source holds.'),
});
type SequenceEntry = z.output<typeof schema>;

function create(entry: SequenceEntry): Adapter {
  const key = `sequence:${entry.name}`;
  return {
    kind: 'sequence',
    name: entry.name,
    mode: 'pull',
    async start(intake, signal) {
      const at = await intake.checkpoint(key);
      for (let i = typeof at?.['next'] === 'number' ? at['next'] : 0; i < entry.messages && !signal.aborted; i += 2) {
        const batch: Inbound[] = [i, i + 1]
          .filter((n) => n < entry.messages)
          .map((n) => ({
            raw: message(n),
            key: `${key}:${n}`,
            origin: { adapter: 'sequence', instance: entry.name, id: String(n), details: { index: n } },
            route: entry.route,
            receivedAt: new Date(),
          }));
        await intake.accept(batch, { checkpoint: { key, value: { next: i + batch.length } } });
      }
    },
  };
}

export const implementation: KindImplementation<SequenceEntry> = { create };

export const kind = defineKind({
  kind: 'sequence',
  mode: 'pull',
  schema: async () => schema,
  description: 'Generated messages (tests only).',
  errors: defineErrors({}),
  load: async () => ({ implementation }),
});
