/**
 * The after-delivery target of a runtime: every adapter that has `afterDelivery`, each handed
 * the origins of its own kind (`origin.adapter`). Adapters of one kind (IMAP accounts) are asked
 * at the same time with the same origins; each settles its own and leaves the others skipped.
 */
import type { ActionTarget } from '../pipeline/after-delivery.js';
import type { Adapter, AfterDeliveryResult, Origin } from '../pipeline/types.js';

type WithActions = Adapter & Required<Pick<Adapter, 'afterDelivery'>>;

export function actionTarget(adapters: readonly Adapter[]): ActionTarget | undefined {
  const targets = adapters.filter((a): a is WithActions => typeof a.afterDelivery === 'function');
  if (targets.length === 0) return undefined;
  return {
    async afterDelivery(origins) {
      const results = await Promise.all(
        targets.map((t) => {
          const mine = origins.filter((o) => o.adapter === t.kind);
          return mine.length === 0 ? undefined : t.afterDelivery(mine);
        }),
      );
      const applied = new Set<Origin>();
      const deferred = new Set<Origin>();
      for (const r of results.filter((x): x is AfterDeliveryResult => x !== undefined)) {
        r.applied.forEach((o) => applied.add(o));
        r.deferred?.forEach((o) => deferred.add(o));
      }
      // An origin one adapter applied is done even if another of its kind deferred it (it is not theirs).
      const held = [...deferred].filter((o) => !applied.has(o));
      const settled = new Set<Origin>([...applied, ...held]);
      return { applied: [...applied], deferred: held, skipped: origins.filter((o) => !settled.has(o)) };
    },
  };
}
