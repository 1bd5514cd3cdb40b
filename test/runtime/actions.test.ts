/** The runtime's after-delivery target: each adapter with afterDelivery gets the origins of its kind. */
import { describe, expect, it } from 'vitest';
import type { Adapter, AfterDeliveryResult, Origin } from '../../src/pipeline/types.js';
import { actionTarget } from '../../src/runtime/actions.js';
import { fileOrigin } from '../../adapters/files/identity.js';

function adapter(kind: string, name: string, settle?: (origins: Origin[]) => AfterDeliveryResult, calls: Origin[][] = []): Adapter {
  return {
    kind,
    name,
    mode: 'pull',
    start: async () => undefined,
    ...(settle ? { afterDelivery: async (origins: Origin[]) => (calls.push(origins), settle(origins)) } : {}),
  };
}

describe('after-delivery dispatch', () => {
  it('is absent when no adapter has actions', () => {
    expect(actionTarget([adapter('files', 'in')])).toBeUndefined();
  });

  it('hands each adapter only its own kind, merges the answers and skips what nobody took', async () => {
    const a1: Origin = { adapter: 'mail', instance: 'one', id: '1', details: { uid: 1 } };
    const a2: Origin = { adapter: 'mail', instance: 'two', id: '2', details: { uid: 2 } };
    const f = fileOrigin('/x', 0);
    const other: Origin = { adapter: 'gone', instance: 'x', id: '', details: {} };
    const calls: Origin[][] = [];
    // Two instances of one kind: each applies (or defers) its own account and skips the other.
    const one = adapter(
      'mail',
      'one',
      (os) => ({ applied: os.filter((o) => o.instance === 'one'), skipped: os.filter((o) => o.instance !== 'one') }),
      calls,
    );
    const two = adapter(
      'mail',
      'two',
      (os) => ({ applied: [], deferred: os.filter((o) => o.instance === 'two'), skipped: os.filter((o) => o.instance !== 'two') }),
      calls,
    );
    const target = actionTarget([one, two, adapter('files', 'in')])!;
    const res = await target.afterDelivery([a1, f, a2, other]);
    expect(calls).toEqual([
      [a1, a2],
      [a1, a2],
    ]);
    expect(res.applied).toEqual([a1]);
    expect(res.deferred).toEqual([a2]);
    expect(res.skipped).toEqual([f, other]);
  });
});
