import { describe, expect, it } from 'vitest';
import { applyPropertyRules, checkRouteProperties, routePropertyProblems } from '../../src/batcher/properties.js';
import type { RouteProperties } from '../../src/batcher/types.js';
import type { RawEmailDocument } from '../../src/model/index.js';

const doc = (props?: Record<string, string | number>): RawEmailDocument => ({
  raw_email: { headers: { raw: 'Subject: hi\r\nMessage-ID: <a@b>' }, body: { plain: 'hello' } },
  comment_id: 'ab',
  ...(props === undefined ? {} : { user_properties: props }),
});

describe('checkRouteProperties', () => {
  it('accepts routes without collisions', () => {
    expect(() => checkRouteProperties({ kind: 'sync', userProperties: { 'string:Mailbox': 'x' } })).not.toThrow();
    expect(() => checkRouteProperties({ kind: 'predict', userProperties: { 'number:Priority': 1 } })).not.toThrow();
  });
  it('a static sync property colliding with a generated one must be listed', () => {
    const route: RouteProperties = { kind: 'sync', userProperties: { 'string:Sender': 'ops' } };
    expect(() => checkRouteProperties(route)).toThrowError(expect.objectContaining({ code: 'MAILGATE_ERR_PROPERTY_CONFLICT' }) as Error);
    expect(() => checkRouteProperties({ ...route, onPropertyConflict: 'override' })).toThrow(/override_user_properties/);
    expect(() => checkRouteProperties({ ...route, overrideUserProperties: ['Sender'] })).not.toThrow();
  });
  it('on a predict route any static collision is an error unless the rule is drop', () => {
    const route: RouteProperties = { kind: 'predict', userProperties: { 'number:Recipient Count': 3 } };
    expect(routePropertyProblems(route)).toHaveLength(1);
    expect(routePropertyProblems({ ...route, onPropertyConflict: 'override' })).toHaveLength(1);
    expect(routePropertyProblems({ ...route, onPropertyConflict: 'drop' })).toEqual([]);
  });
  it('a predict route has no override list', () => {
    expect(routePropertyProblems({ kind: 'predict', overrideUserProperties: ['Sender'] })).toHaveLength(1);
  });
  it('override names are plain names', () => {
    expect(routePropertyProblems({ kind: 'sync', overrideUserProperties: ['string:Sender'] })).toHaveLength(1);
  });
});

describe('applyPropertyRules', () => {
  const conflicting = doc({ 'string:Sender': 'me', 'string:Mailbox': 'support' });

  it('passes documents without collisions untouched', () => {
    const d = doc({ 'string:Mailbox': 'x' });
    const r = applyPropertyRules(d, { kind: 'sync' });
    expect(r).toEqual({ ok: true, document: d, overrides: [], warnings: [] });
  });

  it.each(['sync', 'predict'] as const)('%s reject: refused locally with the conflict code', (kind) => {
    const r = applyPropertyRules(conflicting, { kind, onPropertyConflict: 'reject' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe('MAILGATE_ERR_PROPERTY_CONFLICT');
  });

  it('sync override: the name joins the request override list, with a warning', () => {
    const r = applyPropertyRules(conflicting, { kind: 'sync', onPropertyConflict: 'override' });
    expect(r).toMatchObject({ ok: true, document: conflicting, overrides: ['Sender'] });
    if (r.ok) expect(r.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_PROPERTY_OVERRIDDEN']);
  });

  it('predict override is not possible: rejected', () => {
    const r = applyPropertyRules(conflicting, { kind: 'predict', onPropertyConflict: 'override' });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/cannot override/);
  });

  it.each(['sync', 'predict'] as const)('%s drop: the property is removed, the input untouched', (kind) => {
    const r = applyPropertyRules(conflicting, { kind, onPropertyConflict: 'drop' });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.document.user_properties).toEqual({ 'string:Mailbox': 'support' });
      expect(r.warnings.map((w) => w.code)).toEqual(['MAILGATE_WARN_PROPERTY_DROPPED']);
    }
    expect(conflicting.user_properties).toHaveProperty('string:Sender');
  });

  it('drop of the only property leaves no user_properties', () => {
    const r = applyPropertyRules(doc({ 'number:Participant Count': 2 }), { kind: 'sync', onPropertyConflict: 'drop' });
    expect(r.ok && r.document.user_properties).toBe(undefined);
  });

  it('names listed by a sync route are allowed whatever the rule', () => {
    const r = applyPropertyRules(conflicting, { kind: 'sync', overrideUserProperties: ['Sender'], onPropertyConflict: 'reject' });
    expect(r).toMatchObject({ ok: true, overrides: [], warnings: [] });
  });

  it('the default rule is reject', () => {
    expect(applyPropertyRules(conflicting, { kind: 'sync' }).ok).toBe(false);
  });
});
