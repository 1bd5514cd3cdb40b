/** The runtime's after-delivery target: each adapter with afterDelivery gets the origins of its kind. */
import { describe, expect, it } from 'vitest';
import type { Adapter, AfterDeliveryResult, Origin } from '../../src/pipeline/types.js';
import { actionTarget } from '../../src/runtime/actions.js';

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
    const a1 = { adapter: 'mail', account: 'one', uid: 1 };
    const a2 = { adapter: 'mail', account: 'two', uid: 2 };
    const f = { adapter: 'files', path: '/x', index: 0 };
    const other = { adapter: 'gone', account: 'x' };
    const calls: Origin[][] = [];
    // Two instances of one kind: each applies (or defers) its own account and skips the other.
    const one = adapter(
      'mail',
      'one',
      (os) => ({ applied: os.filter((o) => o.account === 'one'), skipped: os.filter((o) => o.account !== 'one') }),
      calls,
    );
    const two = adapter(
      'mail',
      'two',
      (os) => ({ applied: [], deferred: os.filter((o) => o.account === 'two'), skipped: os.filter((o) => o.account !== 'two') }),
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
