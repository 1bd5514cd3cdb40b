/**
 * What a PromQL expression reads: its metric names, the labels its selectors match on and the
 * labels it aggregates by. Enough of PromQL for the shipped dashboard and alert rules (strings,
 * durations, functions, aggregation clauses); not a full parser.
 */
/** Aggregation operators: `sum by (l) (…)` puts the clause between the name and its parenthesis. */
const AGGREGATORS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset']);

export interface Selector {
  metric: string;
  labels: string[];
}

export interface ExprUse {
  selectors: Selector[];
  /** Labels of `by (…)` / `without (…)` / `on (…)` / `ignoring (…)` clauses. */
  groupings: string[];
}

/** Grafana's variables as a value PromQL accepts. */
export function withoutVariables(expr: string): string {
  return expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$\{?[a-z_]+\}?/gi, 'x');
}

export function promqlUse(expr: string): ExprUse {
  const selectors: Selector[] = [];
  const groupings: string[] = [];
  // Strings and range durations first: their contents are not names.
  const text = withoutVariables(expr)
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\[[^\]]*\]/g, '');
  const token = /([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(\{[^}]*\}|\()?/g;
  for (let m = token.exec(text); m !== null; m = token.exec(text)) {
    const name = m[1]!;
    const after = m[2];
    if (KEYWORDS.has(name)) {
      if (after === '(') {
        const close = text.indexOf(')', token.lastIndex);
        groupings.push(...text.slice(token.lastIndex, close).split(',').map((s) => s.trim()).filter(Boolean));
        token.lastIndex = close + 1;
      }
      continue;
    }
    if (after === '(' || AGGREGATORS.has(name)) continue; // a function
    if (/^\d/.test(name)) continue;
    const labels = after?.startsWith('{') ? [...after.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1]!) : [];
    selectors.push({ metric: name, labels });
  }
  return { selectors, groupings };
}
