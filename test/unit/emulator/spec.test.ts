import { describe, expect, it } from 'vitest';
import { DIMENSIONS, COUNTERS } from '../../../src/platform/config/dimensions.js';
import { SPEC_COUNTERS, SPEC_DIMENSIONS } from '../../../src/emulator/report/dimensions.js';

describe('emulator spec names', () => {
  it("match the client's dimension and counter lists (kept as separate copies on purpose)", () => {
    expect([...SPEC_DIMENSIONS]).toEqual([...DIMENSIONS]);
    expect([...SPEC_COUNTERS]).toEqual([...COUNTERS]);
  });
});
