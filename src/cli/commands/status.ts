/** `mailgate status`: outbox depth, per-route counters, checkpoints, AI units spent and the running processes. */
import type { Command } from 'commander';
import type { OwnerSummary } from '../../store/common.js';
import type { Lease, MailboxStateRow, Store, StoreStats } from '../../store/types.js';
import type { StoreFlags } from '../store.js';
import type { CliCommand, CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { DEFAULT_STORE_URL } from '../../config/defaults.js';

interface StatusFlags extends StoreFlags {
  json?: boolean;
}

async function run(flags: StatusFlags, ctx: CliContext): Promise<void> {
  const { withStore } = await import('../store.js');
  const status = await withStore(flags, process.env, async (store) => {
    const all = await store.listCheckpoints();
    const pauses = new Map((await store.listRoutePauses()).map((p) => [p.route, p]));
    return {
      store: store.kind,
      storeStats: await store.storeStats(),
      outboxDepth: await store.outboxDepth(),
      outbox: await store.outboxCounts(),
      // `paused`: as the last process delivering the route reported it (null: delivering).
      routes: (await store.counters()).map((r) => ({ ...r, paused: pauses.get(r.route) ?? null })),
      mailboxes: await store.listMailboxStates(),
      checkpoints: all,
      ...(await owners(store)),
    };
  });
  const write = writerFor(ctx.stdout);
  if (flags.json === true) return write(`${JSON.stringify(status)}\n`);
  const lines = [`store: ${status.store}`, ...storeLines(status.storeStats), `outbox depth (queued): ${status.outboxDepth}`, '', 'routes:'];
  if (status.routes.length === 0) lines.push('  (none yet)');
  for (const r of status.routes) {
    const queued = status.outbox.find((o) => o.route === r.route && o.status === 'queued')?.count ?? 0;
    lines.push(
      `  ${r.route}: enqueued ${r.enqueued}, queued ${queued}, delivered ${r.delivered}, unchanged ${r.unchanged}, dead-lettered ${r.deadLettered}, AI units ${r.aiUnits}`,
    );
    const p = r.paused as Record<string, unknown> | null;
    if (p !== null)
      lines.push(
        `    PAUSED since ${String(p['since'])}: ${String(p['code'])}: ${String(p['message'])} (nothing is delivered; fix the token, URL or target)`,
      );
  }
  if (status.mailboxes.length > 0) lines.push('', 'mailboxes:', ...mailboxLines(status.mailboxes));
  // Mailboxes keep their current error in a checkpoint beside their folders' (Graph): listed first.
  const failing = status.checkpoints.filter((c) => mailboxError(c.value) !== undefined);
  if (failing.length > 0) {
    lines.push('', 'mailbox errors:');
    for (const c of failing) {
      const e = mailboxError(c.value)!;
      lines.push(`  ${c.key}: ${e.code}: ${e.message} (since ${e.at ?? c.updatedAt})`);
    }
  }
  lines.push('', 'checkpoints:');
  if (status.checkpoints.length === 0) lines.push('  (none)');
  for (const c of status.checkpoints) lines.push(`  ${c.key}: ${JSON.stringify(c.value)} (updated ${c.updatedAt})`);
  lines.push('', 'processes (registered owners of outbox claims):');
  if (status.owners.length === 0) lines.push('  (none running)');
  for (const o of status.owners) {
    const replica = o.group === undefined ? '' : `, replica of group ${o.group} holding ${o.leases.length} mailbox leases`;
    lines.push(`  ${o.id}: host ${o.host}, pid ${o.pid}, heartbeat ${(o.heartbeatAgeMs / 1000).toFixed(1)} s ago${replica}`);
  }
  const orphans = status.leases.filter((l) => !status.owners.some((o) => o.id === l.owner));
  for (const l of orphans) lines.push(`  (lease ${l.name} held by ${l.owner}, not registered: expires ${l.expiresAt})`);
  await write(`${lines.join('\n')}\n`);
}

/** One line a mailbox (its state, the reason when disabled), one a folder under it. */
export function mailboxLines(mailboxes: readonly MailboxStateRow[]): string[] {
  const lines: string[] = [];
  for (const m of mailboxes) {
    const state = m.enabled ? 'enabled' : `DISABLED (${m.reason ?? 'user'}${m.errorKind ? `, ${m.errorKind}` : ''})`;
    const error = m.errorCode ? `; last error ${m.errorCode}: ${m.errorMessage ?? ''}` : '';
    const failing = m.enabled && m.failingSince ? `; failing since ${m.failingSince}` : '';
    lines.push(`  ${m.mailbox}: ${state}${m.byCommand ? ' by command' : ''}, filtered ${m.filtered}${failing}${error}`);
    for (const f of m.folders) {
      const behind = f.behind === null ? '' : `, ${f.behind} behind`;
      const until = f.syncedUntil === null ? '' : `, synced until ${f.syncedUntil}`;
      const last = f.lastSynced === null ? '' : `, last synced ${f.lastSynced}`;
      lines.push(`    ${f.folder}: ${f.state ?? 'not synced yet'}${until}${last}${behind}, filtered ${f.filtered}`);
    }
  }
  return lines;
}

const MIB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MIB).toFixed(1)} MiB`;

/** The store's size, free space and oldest items (docs/store.md "Retention"). */
function storeLines(s: StoreStats): string[] {
  const free = s.freeBytes === undefined ? '' : `, ${mib(s.freeBytes)} of it free for reuse`;
  const vacuum =
    s.autoVacuum === undefined || s.autoVacuum === 'incremental'
      ? ''
      : ` (auto-vacuum ${s.autoVacuum}: pruned space is reused but the file never shrinks; \`mailgate store compact\` converts it once)`;
  const o = s.oldest;
  const oldest = (['queued', 'delivered', 'dead'] as const).map((k) => `${k} ${o[k] ?? '(none)'}`).join(', ');
  return [`store size: ${mib(s.bytes)}${free}${vacuum}`, `oldest items: ${oldest}`];
}

/** The `{ error: { code, message } }` a mailbox keeps in its state checkpoint, if any. */
function mailboxError(value: Record<string, unknown>): { code: string; message: string; at?: string } | undefined {
  const e = value['error'] as { code?: unknown; message?: unknown; at?: unknown } | undefined;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string') return undefined;
  return { code: e.code, message: String(e.message ?? ''), ...(typeof e.at === 'string' ? { at: e.at } : {}) };
}

/** Registered owners with the mailbox leases each holds, and every live lease. */
async function owners(store: Store): Promise<{ owners: OwnerSummary[]; leases: Lease[] }> {
  const { ownerSummary } = await import('../../store/common.js');
  const leases = await store.listLeases();
  return { owners: (await store.listOwners()).map((o) => ownerSummary(o, leases)), leases };
}

export const statusCommand: CliCommand = {
  name: 'status',
  register(program: Command, ctx: CliContext): void {
    program
      .command('status')
      .description('show the outbox depth, per-route counts, adapter checkpoints, AI units spent and the processes holding claims')
      .option('--config <file>', 'mailgate.yaml (for its store)')
      .option('--store <url>', `sqlite:PATH or postgres://… (default ${DEFAULT_STORE_URL})`)
      .option('--json', 'one JSON object on stdout')
      .action((flags: StatusFlags) => run(flags, ctx));
  },
};
