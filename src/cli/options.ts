import { InvalidArgumentError } from 'commander';

/** A commander parser for a whole number within [min, max], with a message naming the range. */
export function intOption(min: number, max: number): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}
