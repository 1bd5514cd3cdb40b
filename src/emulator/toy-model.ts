/**
 * The emulator's toy model: deterministic keyword rules, documented in docs/emulator.md.
 *
 * A label's weight w is the number of whole-word keyword hits in the bodies plus twice the
 * hits in the subjects of the comment's messages (case-insensitive; a phrase matches its
 * words in sequence, whatever punctuation lies between); its probability is 1 - 0.5^w (capped at
 * 0.99), or 0.01 without a hit. A parent label (`Billing`) has the highest probability of its
 * children. Sentiment = (positive - negative) / (positive + negative) word hits, 0 without any.
 */
import type { Comment } from '../model/index.js';

export interface ToyLabel {
  name: string[];
  keywords: string[];
  /** The label's `auto` threshold (balanced level). */
  auto: number;
  /** First model version that knows the label. */
  since: number;
}

export const TAXONOMY: readonly ToyLabel[] = [
  { name: ['Billing', 'Refund'], keywords: ['refund', 'refunded', 'money back', 'reimburse', 'chargeback'], auto: 0.5, since: 1 },
  { name: ['Billing', 'Invoice'], keywords: ['invoice', 'invoices', 'receipt', 'statement', 'billing'], auto: 0.5, since: 1 },
  { name: ['Billing', 'Payment'], keywords: ['payment', 'paid', 'charged', 'credit card', 'direct debit'], auto: 0.6, since: 1 },
  { name: ['Support', 'Password Reset'], keywords: ['password', 'reset', 'locked out', 'log in', 'login'], auto: 0.5, since: 1 },
  { name: ['Support', 'Technical Issue'], keywords: ['error', 'bug', 'crash', 'crashes', 'broken', 'not working'], auto: 0.6, since: 1 },
  { name: ['Delivery', 'Delay'], keywords: ['late', 'delayed', 'delay', 'still waiting', 'not arrived', 'tracking'], auto: 0.5, since: 1 },
  { name: ['Complaint'], keywords: ['complaint', 'unacceptable', 'disappointed', 'terrible', 'worst', 'angry'], auto: 0.5, since: 1 },
  { name: ['Cancellation'], keywords: ['cancel', 'cancellation', 'unsubscribe', 'terminate', 'close my account'], auto: 0.5, since: 1 },
  { name: ['Praise'], keywords: ['thank you', 'thanks', 'great', 'excellent', 'love', 'appreciate'], auto: 0.7, since: 1 },
  { name: ['Sales', 'Quote'], keywords: ['quote', 'quotation', 'pricing', 'price list'], auto: 0.5, since: 2 },
];

export const POSITIVE_WORDS = [
  'thank',
  'thanks',
  'great',
  'excellent',
  'love',
  'appreciate',
  'happy',
  'pleased',
  'perfect',
  'wonderful',
  'good',
];
export const NEGATIVE_WORDS = [
  'bad',
  'terrible',
  'worst',
  'disappointed',
  'angry',
  'unacceptable',
  'broken',
  'problem',
  'awful',
  'poor',
  'frustrated',
  'complaint',
];

/** A scored label: probability before any threshold, and its auto threshold. */
export interface Score {
  name: string[];
  probability: number;
  auto: number;
}

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

/** A text as lowercase words: counts per word, and the word sequence for phrases. */
export interface Tokens {
  counts: Map<string, number>;
  /** ` w1 w2 … ` (single spaces, punctuation removed). */
  joined: string;
}

export function tokenize(text: string): Tokens {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const counts = new Map<string, number>();
  for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
  return { counts, joined: ` ${words.join(' ')} ` };
}

/** Whole-word hits of the keywords; a phrase matches its words in sequence, whatever punctuation lies between. */
export function countHits(t: Tokens, keywords: readonly string[]): number {
  let n = 0;
  for (const k of keywords) {
    if (!k.includes(' ')) {
      n += t.counts.get(k) ?? 0;
      continue;
    }
    const needle = ` ${k} `;
    for (let i = t.joined.indexOf(needle); i >= 0; i = t.joined.indexOf(needle, i + 1)) n += 1;
  }
  return n;
}

export function probabilityOf(weight: number): number {
  return weight === 0 ? 0.01 : round4(Math.min(0.99, 1 - 0.5 ** weight));
}

/** What the model looks at: the words of the subjects and of the bodies of the comment's messages. */
export interface Features {
  subject: Tokens;
  body: Tokens;
}

export function featuresOf(comment: Comment): Features {
  return {
    subject: tokenize(comment.messages.map((m) => m.subject?.text ?? '').join('\n')),
    body: tokenize(comment.messages.map((m) => m.body.text).join('\n')),
  };
}

/** Every label the model version knows, parents included, with its probability for this comment. */
export function score(f: Features, version: number): Score[] {
  const leaves = TAXONOMY.filter((l) => l.since <= version).map((l) => ({
    name: l.name,
    auto: l.auto,
    probability: probabilityOf(countHits(f.body, l.keywords) + 2 * countHits(f.subject, l.keywords)),
  }));
  const parents = new Map<string, Score>();
  for (const leaf of leaves.filter((l) => l.name.length > 1)) {
    const key = leaf.name[0]!;
    const p = parents.get(key);
    if (!p) parents.set(key, { name: [key], probability: leaf.probability, auto: leaf.auto });
    else p.probability = Math.max(p.probability, leaf.probability);
  }
  return [...parents.values(), ...leaves];
}

/** -1..1 from positive and negative word hits in subjects and bodies, or 0 when there is neither. */
export function sentimentOf(f: Features): number {
  const pos = countHits(f.subject, POSITIVE_WORDS) + countHits(f.body, POSITIVE_WORDS);
  const neg = countHits(f.subject, NEGATIVE_WORDS) + countHits(f.body, NEGATIVE_WORDS);
  return pos + neg === 0 ? 0 : round4((pos - neg) / (pos + neg));
}
