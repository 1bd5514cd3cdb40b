/**
 * Contract cases for registered owners (processes that claim work): registration, heartbeat,
 * and taking back a dead owner's claims before its lease runs out. The clock is a fake one.
 */
import { describe, expect, it } from 'vitest';
import { expectCode, fakeClock, input, type ContractContext } from './store.case.js';

const owner = (id: string, heartbeatMs = 5_000) => ({ id, host: 'host-a', pid: 4242, procStart: '12345', heartbeatMs });
const HOUR = 3_600_000;

export function ownerCases(ctx: ContractContext): void {
  describe('owners', () => {
    it('registers, lists with the heartbeat age by the store clock, renews and deregisters', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.registerOwner(owner('a'));
      await s.registerOwner({ id: 'b', host: 'host-b', pid: 7, heartbeatMs: 1_000 });
      clock.advance(2_000);
      expect(await s.heartbeatOwner('b')).toBe(true);
      const [a, b] = await s.listOwners();
      expect(a).toMatchObject({ id: 'a', host: 'host-a', pid: 4242, procStart: '12345', heartbeatMs: 5_000, heartbeatAgeMs: 2_000 });
      expect(b).toMatchObject({ id: 'b', host: 'host-b', pid: 7, heartbeatMs: 1_000, heartbeatAgeMs: 0 });
      expect(b?.procStart).toBeUndefined();
      expect(Date.parse(a?.heartbeatAt ?? '') - Date.parse(b?.heartbeatAt ?? '')).toBe(-2_000);
      expect(await s.deregisterOwner('a')).toBe(0);
      expect((await s.listOwners()).map((o) => o.id)).toEqual(['b']);
      expect(await s.heartbeatOwner('a')).toBe(false);
      await expectCode(s.registerOwner({ ...owner('c'), heartbeatMs: 0 }), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
      await expectCode(s.reapOwners([], 0), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    });

    it('releases the claims of an owner named dead at once, long before its lease runs out', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.enqueue([input('r', 1), input('r', 2), input('r', 3)]);
      await s.registerOwner(owner('dead'));
      await s.registerOwner(owner('alive'));
      const held = await s.claim('r', 2, 'dead', HOUR);
      expect(held).toHaveLength(2);
      expect(await s.claim('r', 1, 'alive', HOUR)).toHaveLength(1);
      await s.acquireLease('imap:acct:INBOX', 'dead', HOUR);
      expect(await s.claim('r', 10, 'new', HOUR)).toEqual([]);
      const reaped = await s.reapOwners(['dead'], 3);
      expect(reaped).toEqual({ owners: ['dead'], claims: 2 });
      expect((await s.claim('r', 10, 'new', HOUR)).map((i) => i.id)).toEqual(held.map((i) => i.id));
      expect(await s.getLease('imap:acct:INBOX')).toBeUndefined();
      expect((await s.listOwners()).map((o) => o.id)).toEqual(['alive']);
      // Reaping again finds nothing; delivered or dead items are never touched.
      expect(await s.reapOwners(['dead'], 3)).toEqual({ owners: [], claims: 0 });
    });

    it('takes an owner for dead after the given number of its own heartbeat intervals, not before', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.enqueue([input('r', 1), input('r', 2)]);
      await s.registerOwner(owner('slow', 10_000));
      await s.registerOwner(owner('quick', 1_000));
      await s.claim('r', 1, 'slow', HOUR);
      await s.claim('r', 1, 'quick', HOUR);
      clock.advance(2_999);
      expect(await s.reapOwners([], 3)).toEqual({ owners: [], claims: 0 });
      clock.advance(1);
      expect(await s.reapOwners([], 3)).toEqual({ owners: ['quick'], claims: 1 });
      clock.advance(20_000);
      expect(await s.heartbeatOwner('slow')).toBe(true);
      clock.advance(29_999);
      expect(await s.reapOwners([], 3)).toEqual({ owners: [], claims: 0 });
      expect(await s.claim('r', 10, 'new', HOUR)).toHaveLength(1);
      clock.advance(1);
      expect(await s.reapOwners([], 3)).toEqual({ owners: ['slow'], claims: 1 });
      expect(await s.claim('r', 10, 'new', HOUR)).toHaveLength(1);
    });

    it('deregistering releases what the owner still holds; registering again keeps the start time', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.enqueue([input('r', 1), input('r', 2)]);
      await s.registerOwner(owner('w'));
      const [first] = await s.listOwners();
      clock.advance(1_000);
      await s.registerOwner(owner('w'));
      const [again] = await s.listOwners();
      expect(again?.startedAt).toBe(first?.startedAt);
      expect(again?.heartbeatAgeMs).toBe(0);
      const claimed = await s.claim('r', 10, 'w', HOUR);
      await s.markDelivered([claimed[0]!.id], { outcome: 'delivered' });
      expect(await s.deregisterOwner('w')).toBe(1);
      expect((await s.claim('r', 10, 'next', HOUR)).map((i) => i.id)).toEqual([claimed[1]!.id]);
      expect(await s.listOwners()).toEqual([]);
    });

    it('keeps the lease group of an owner; reaping ends its leases and fences its writes', async () => {
      const clock = fakeClock();
      const s = await ctx.open({ now: clock.now });
      await s.registerOwner({ ...owner('gone'), group: 'g1' });
      await s.registerOwner(owner('cli'));
      expect((await s.listOwners()).map((o) => [o.id, o.group])).toEqual([
        ['cli', undefined],
        ['gone', 'g1'],
      ]);
      const lease = (await s.acquireLease('imap:acct', 'gone', HOUR))!;
      await s.reapOwners(['gone'], 3);
      expect(await s.listLeases()).toEqual([]);
      await expectCode(
        s.setCheckpoint('imap:acct:INBOX', { lastUid: 1 }, { lease: 'imap:acct', owner: 'gone', token: lease.token }),
        'MAILGATE_ERR_STORE_FENCED',
      );
      expect((await s.acquireLease('imap:acct', 'next', HOUR))?.token).toBeGreaterThan(lease.token);
    });
  });
}
