/**
 * Turns toy-model scores into the predict-raw-emails answer: thresholds (number, `auto`,
 * per-label `labels`), sentiment on the returned labels, entities and label properties.
 */
import { DEFAULT_THRESHOLD } from '../limits.js';
import type { Comment, LabelThreshold } from '../model/index.js';
import { score, sentimentOf, type Features, type Score } from './toy-model.js';

export interface EmulatedLabel {
  name: string[];
  probability: number;
  sentiment?: number;
  auto_thresholds?: string[];
}

export interface TextSpan {
  content_part: 'body';
  message_index: number;
  char_start: number;
  char_end: number;
  utf16_byte_start: number;
  utf16_byte_end: number;
}

export interface EmulatedEntity {
  id: string;
  kind: string;
  name: string;
  formatted_value: string;
  probability: number | null;
  capture_ids: number[];
  span: TextSpan;
  spans: TextSpan[];
}

export interface ThresholdPlan {
  threshold: number | 'auto' | undefined;
  labels: LabelThreshold[] | undefined;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** The three named levels of a label's auto threshold; `auto` filters on `balanced`. */
export function autoLevels(auto: number): Record<'high_recall' | 'balanced' | 'high_precision', number> {
  return { high_recall: round2(Math.max(0.05, auto - 0.2)), balanced: auto, high_precision: round2(Math.min(0.95, auto + 0.2)) };
}

/** The threshold that applies to a label, or undefined when `labels` leaves it out. */
function thresholdFor(s: Score, plan: ThresholdPlan): number | 'auto' | undefined {
  const top = plan.threshold ?? DEFAULT_THRESHOLD;
  if (plan.labels === undefined) return top;
  const key = s.name.join('\u0000');
  const wanted = plan.labels.find((l) => l.name.join('\u0000') === key);
  return wanted === undefined ? undefined : (wanted.threshold ?? top);
}

export function labelsFor(f: Features, version: number, plan: ThresholdPlan, withSentiment: boolean): EmulatedLabel[] {
  const sentiment = withSentiment ? sentimentOf(f) : undefined;
  const out: EmulatedLabel[] = [];
  for (const s of score(f, version)) {
    const t = thresholdFor(s, plan);
    if (t === undefined) continue;
    const levels = autoLevels(s.auto);
    if (s.probability < (t === 'auto' ? levels.balanced : t)) continue;
    const label: EmulatedLabel = { name: s.name, probability: s.probability };
    if (sentiment !== undefined) label.sentiment = sentiment;
    if (t === 'auto')
      label.auto_thresholds = Object.entries(levels)
        .filter(([, v]) => s.probability >= v)
        .map(([k]) => k);
    out.push(label);
  }
  return out.sort((a, b) => b.probability - a.probability || a.name.join('>').localeCompare(b.name.join('>')));
}

const DATE_RE = /\b(\d{4})-(\d{2})-(\d{2})\b|\b(\d{1,2})\/(\d{1,2})\/(\d{4})\b/g;
const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

function span(text: string, messageIndex: number, start: number, end: number): TextSpan {
  const chars = (s: string): number => [...s].length;
  return {
    content_part: 'body',
    message_index: messageIndex,
    char_start: chars(text.slice(0, start)),
    char_end: chars(text.slice(0, end)),
    utf16_byte_start: start * 2,
    utf16_byte_end: end * 2,
  };
}

/** Dates (`YYYY-MM-DD`, `DD/MM/YYYY`) and email addresses found in the message bodies. */
export function entitiesFor(comment: Comment): EmulatedEntity[] {
  const found: EmulatedEntity[] = [];
  const add = (kind: string, formatted: string, text: string, i: number, start: number, end: number): void => {
    const s = span(text, i, start, end);
    const id = found.length.toString(16).padStart(16, '0');
    found.push({ id, kind, name: kind, formatted_value: formatted, probability: null, capture_ids: [], span: s, spans: [s] });
  };
  comment.messages.forEach((m, i) => {
    const text = m.body.text;
    for (const d of text.matchAll(DATE_RE)) {
      const [y, mo, da] = d[1] !== undefined ? [d[1], d[2]!, d[3]!] : [d[6]!, d[5]!.padStart(2, '0'), d[4]!.padStart(2, '0')];
      add('date', `${y}-${mo}-${da}`, text, i, d.index, d.index + d[0].length);
    }
    for (const e of text.matchAll(EMAIL_RE)) add('email_address', e[0].toLowerCase(), text, i, e.index, e.index + e[0].length);
  });
  return found;
}

export function labelPropertiesFor(f: Features, withSentiment: boolean): { property_id: string; property_name: string; value: number }[] {
  return withSentiment ? [{ property_id: '0000000000000001', property_name: 'tone', value: sentimentOf(f) }] : [];
}
