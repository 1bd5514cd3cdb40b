/**
 * Thread ids and thread properties (spec "Thread properties"; DESIGN.md "Threads").
 *
 * A thread is keyed by its root message: the first id of References, else In-Reply-To,
 * else an Outlook Thread-Index that carries reply blocks (its first 22 bytes name the
 * conversation), else the message's own Message-ID. The thread id is the lowercase hex of the
 * root's UTF-8 bytes (SHA-256 hex when that exceeds 1024 characters). A message with none of
 * them is a thread of its own: its thread id is its comment id itself (already hex), else a
 * SHA-256 hex of its header block.
 */
import { createHash } from 'node:crypto';
import { MAX_COMMENT_ID_CHARS } from '../limits.js';
import { firstMessageId, getHeader } from '../mime/headers.js';
import type { HeaderField } from '../mime/types.js';
import type { Comment, Message, ThreadProperties } from '../model/index.js';

/** Bytes of a Thread-Index that identify the conversation (6 bytes FILETIME + 16 bytes GUID). */
const THREAD_INDEX_ROOT_BYTES = 22;

function hexId(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return hex.length > MAX_COMMENT_ID_CHARS ? createHash('sha256').update(bytes).digest('hex') : hex;
}

/** The conversation part of a reply's Thread-Index, or undefined (absent, invalid, or a root's own index). */
function threadIndexRoot(headers: readonly HeaderField[]): Buffer | undefined {
  const v = getHeader(headers, 'thread-index')?.replace(/\s+/g, '');
  if (v === undefined || v === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(v)) return undefined;
  const bytes = Buffer.from(v, 'base64');
  return bytes.length > THREAD_INDEX_ROOT_BYTES ? bytes.subarray(0, THREAD_INDEX_ROOT_BYTES) : undefined;
}

/** The root message the thread is keyed by, as bytes: a message id or a Thread-Index prefix; undefined when the message names none. */
export function threadRoot(headers: readonly HeaderField[]): Buffer | undefined {
  const ref = firstMessageId(getHeader(headers, 'references')) ?? firstMessageId(getHeader(headers, 'in-reply-to'));
  if (ref !== undefined) return Buffer.from(ref, 'utf8');
  const index = threadIndexRoot(headers);
  if (index !== undefined) return index;
  const own = firstMessageId(getHeader(headers, 'message-id'));
  return own === undefined ? undefined : Buffer.from(own, 'utf8');
}

const HEX_ID_RE = /^[0-9a-f]{1,1024}$/;

/** The hex thread id of a message (see the module comment). Never empty. */
export function threadIdFor(headers: readonly HeaderField[], commentId?: string): string {
  const root = threadRoot(headers);
  if (root !== undefined) return hexId(root);
  if (commentId !== undefined && HEX_ID_RE.test(commentId)) return commentId;
  return createHash('sha256')
    .update(headers.map((h) => h.raw).join('\n'))
    .digest('hex');
}

// --- thread properties ------------------------------------------------------------------

/** The lowercased address of a formatted participant (`Name <a@b>` or `a@b`), or undefined. */
export function addressKey(participant: string | undefined): string | undefined {
  if (participant === undefined) return undefined;
  const open = participant.lastIndexOf('<');
  const close = participant.lastIndexOf('>');
  const a = (open >= 0 && close > open ? participant.slice(open + 1, close) : participant).trim().toLowerCase();
  return a === '' ? undefined : a;
}

/**
 * The lowercased addresses of a message's sender and recipients, once each (a thread index
 * entry's participants; thread properties count them with the same addressKey rule).
 */
export function messageAddresses(m: Message | undefined): string[] {
  const out = new Set<string>();
  for (const p of m === undefined ? [] : [m.from, ...(m.to ?? []), ...(m.cc ?? []), ...(m.bcc ?? [])]) {
    const k = addressKey(p);
    if (k !== undefined) out.add(k);
  }
  return [...out];
}

function senderOf(c: Comment): string | undefined {
  return addressKey(c.messages[0]?.from);
}

function participantsOf(c: Comment, into: Set<string>): void {
  for (const m of c.messages) {
    for (const p of [m.from, ...(m.to ?? []), ...(m.cc ?? []), ...(m.bcc ?? [])]) {
      const k = addressKey(p);
      if (k !== undefined) into.add(k);
    }
  }
}

/** Milliseconds of the timestamp; an unreadable one (never in a schema-valid comment) sorts first as 0. */
function timeOf(c: Comment): number {
  const t = Date.parse(c.timestamp);
  return Number.isFinite(t) ? t : 0;
}

function byTimeThenId(a: { t: number; c: Comment }, b: { t: number; c: Comment }): number {
  if (a.t !== b.t) return a.t - b.t;
  return a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0;
}

function threadOf(members: Comment[], out: Map<string, ThreadProperties>): void {
  const sorted = members.map((c) => ({ t: timeOf(c), c })).sort(byTimeThenId);
  const people = new Set<string>();
  for (const { c } of sorted) participantsOf(c, people);
  const first = sorted[0]!;
  const firstSender = senderOf(first.c);
  const last = sorted[sorted.length - 1]!;
  const response = sorted.find(({ c }, i) => i > 0 && senderOf(c) !== undefined && senderOf(c) !== firstSender);
  const shared = {
    num_messages: sorted.length,
    num_participants: people.size,
    first_sender: firstSender ?? null,
    duration: sorted.length === 1 ? null : (last.t - first.t) / 1000,
    response_time: response === undefined ? null : (response.t - first.t) / 1000,
  };
  sorted.forEach(({ c }, i) => out.set(c.id, { thread_position: i, ...shared }));
}

/**
 * Thread properties of every comment, keyed by comment id, exactly as the spec defines them.
 * Comments without a thread_id form one-comment threads; a repeated comment id counts once
 * (the last occurrence wins, as an update would).
 */
export function computeThreadProperties(comments: readonly Comment[]): Map<string, ThreadProperties> {
  const latest = new Map<string, Comment>();
  for (const c of comments) latest.set(c.id, c);
  const groups = new Map<string, Comment[]>();
  for (const c of latest.values()) {
    const key = c.thread_id === undefined ? `\u0000${c.id}` : c.thread_id;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, [c]);
    else g.push(c);
  }
  const out = new Map<string, ThreadProperties>();
  for (const members of groups.values()) threadOf(members, out);
  return out;
}
