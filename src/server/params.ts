/** Query and path parameters: strict zod schemas; a violation is a 400 naming the parameter. */
import { z } from 'zod';
import { httpError } from './errors.js';

/** A decimal integer string within [min, max]. */
export const intParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d{1,16}$/, 'must be a decimal integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));

export const idParams = z.object({ id: intParam(1, Number.MAX_SAFE_INTEGER) }).strict();

export const routeName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a route name');

export function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  throw httpError('MAILGATE_ERR_SERVER_BAD_REQUEST', `Invalid ${what}${path ? ` "${path}"` : ''}: ${issue.message}.`);
}
