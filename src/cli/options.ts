/** Option parsers for commander: explicit validation, 0 means 0, errors name the flag. */
import { InvalidArgumentError } from 'commander';

export function integerOption(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  const expected = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer from ${min} to ${max}`;
  return (value: string) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected ${expected}`);
    return n;
  };
}

export function choiceOption<T extends string>(choices: readonly T[]): (value: string) => T {
  return (value: string) => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return value as T;
  };
}
