/**
 * Property-override rules (DESIGN.md "User properties"). The service fails a WHOLE request
 * with 422 when a client property has the name of a generated one and the name is not in
 * `override_user_properties` (predict-raw-emails has no such list). These rules make sure
 * that never happens: static conflicts are configuration errors, and every document is
 * settled here, before batching, by the route's `on_property_conflict`.
 */
import { GatewayError, warning, type Warning } from '../errors.js';
import { MAX_OVERRIDE_PROPERTIES } from '../limits.js';
import { GENERATED_PROPERTIES, isValidPropertyName, propertyName, type RawEmailDocument } from '../model/index.js';
import type { RouteProperties } from './types.js';

export function isGeneratedProperty(name: string): boolean {
  return Object.prototype.hasOwnProperty.call(GENERATED_PROPERTIES, name);
}

/** Keys of the properties whose name collides with a generated property. */
export function collidingKeys(props: Record<string, unknown> | undefined): string[] {
  if (props === undefined) return [];
  return Object.keys(props).filter((key) => {
    const name = propertyName(key);
    return name !== undefined && isGeneratedProperty(name);
  });
}

/** Every configuration problem of a route's property rules, as messages (empty when fine). */
export function routePropertyProblems(route: RouteProperties): string[] {
  const problems: string[] = [];
  const overrides = route.overrideUserProperties ?? [];
  if (route.kind === 'predict' && overrides.length > 0) {
    problems.push('override_user_properties is not available on a predict route (predict-raw-emails has no override list)');
  }
  if (overrides.length > MAX_OVERRIDE_PROPERTIES) {
    problems.push(`override_user_properties holds ${overrides.length} names; at most ${MAX_OVERRIDE_PROPERTIES}`);
  }
  for (const name of overrides) {
    if (!isValidPropertyName(name)) problems.push(`override_user_properties entry "${name}" is not a valid property name (no type prefix)`);
  }
  const listed = new Set(overrides);
  for (const key of collidingKeys(route.userProperties)) {
    const name = propertyName(key)!;
    if (route.kind === 'sync' && !listed.has(name)) {
      problems.push(
        `user property "${key}" collides with the generated "${name}"; list "${name}" in override_user_properties or rename it`,
      );
    }
    if (route.kind === 'predict' && route.onPropertyConflict !== 'drop') {
      problems.push(
        `user property "${key}" collides with the generated "${name}" and predict-raw-emails cannot override it; rename it or set on_property_conflict: drop`,
      );
    }
  }
  return problems;
}

/** Throws MAILGATE_ERR_PROPERTY_CONFLICT naming every problem; for configuration checks at startup. */
export function checkRouteProperties(route: RouteProperties): void {
  const problems = routePropertyProblems(route);
  if (problems.length > 0) {
    throw new GatewayError('MAILGATE_ERR_PROPERTY_CONFLICT', problems.join('; '), { details: { problems } });
  }
}

export type PropertyResult =
  | { ok: true; document: RawEmailDocument; overrides: string[]; warnings: Warning[] }
  | { ok: false; error: GatewayError; warnings: Warning[] };

/**
 * Settles one document's colliding properties by the route's rule. `reject`: refused here,
 * never sent. `override`: sync adds the name to the request's override list; predict cannot
 * override, so it rejects. `drop`: the property is removed, with a warning. Names the sync
 * route lists in override_user_properties are always allowed. The input is never mutated.
 */
export function applyPropertyRules(doc: RawEmailDocument, route: RouteProperties): PropertyResult {
  const keys = collidingKeys(doc.user_properties);
  if (keys.length === 0) return { ok: true, document: doc, overrides: [], warnings: [] };
  const listed = new Set(route.kind === 'sync' ? (route.overrideUserProperties ?? []) : []);
  const mode = route.onPropertyConflict ?? 'reject';
  const overrides: string[] = [];
  const warnings: Warning[] = [];
  const dropped: string[] = [];
  for (const key of keys) {
    const name = propertyName(key)!;
    if (listed.has(name)) continue;
    if (mode === 'drop') {
      dropped.push(key);
      warnings.push(warning('MAILGATE_WARN_PROPERTY_DROPPED', `user property "${key}" dropped: it collides with the generated "${name}"`));
    } else if (mode === 'override' && route.kind === 'sync') {
      overrides.push(name);
      warnings.push(warning('MAILGATE_WARN_PROPERTY_OVERRIDDEN', `user property "${key}" overrides the generated "${name}"`));
    } else {
      const why = route.kind === 'predict' && mode === 'override' ? ' (predict-raw-emails cannot override)' : '';
      const error = new GatewayError(
        'MAILGATE_ERR_PROPERTY_CONFLICT',
        `user property "${key}" collides with the generated "${name}"${why}`,
      );
      return { ok: false, error, warnings };
    }
  }
  if (dropped.length === 0) return { ok: true, document: doc, overrides, warnings };
  const props = { ...doc.user_properties };
  for (const key of dropped) delete props[key];
  const document: RawEmailDocument = { ...doc, user_properties: props };
  if (Object.keys(props).length === 0) delete document.user_properties;
  return { ok: true, document, overrides, warnings };
}
