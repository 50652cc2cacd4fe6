// A node --import preload that moves this process's clock SHIFTED_CLOCK_DAYS days on (Date and
// Date.now only): a local clock gone wrong, for tests of what must follow the database's clock.
// faketime does the same for the whole process where it is installed.
const days = Number(process.env.SHIFTED_CLOCK_DAYS ?? '0');
const shiftMs = days * 86_400_000;
const RealDate = Date;

class ShiftedDate extends RealDate {
  constructor(...args: ConstructorParameters<DateConstructor> | []) {
    if (args.length === 0) super(RealDate.now() + shiftMs);
    else super(...(args as ConstructorParameters<DateConstructor>));
  }

  static override now(): number {
    return RealDate.now() + shiftMs;
  }
}

globalThis.Date = ShiftedDate as DateConstructor;
