// String formats the schemas use, as plain functions: the precompiled validators call them, so
// checking a format never compiles code at run time.

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * RFC 3339 `date-time` (section 5.6): a full date, `T`, a full time with seconds and an offset
 * (`Z` or `±HH:MM`); the fields must name a real calendar date and clock time. A leap second
 * (`:60`) is accepted only where it can occur: at 23:59 UTC.
 */
export function isDateTime(value: string): boolean {
  const m = DATE_TIME.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return false;
  if (hour > 23 || minute > 59 || second > 60) return false;
  const offsetHours = m[8] === undefined ? 0 : Number(m[8]);
  const offsetMinutes = m[9] === undefined ? 0 : Number(m[9]);
  if (offsetHours > 23 || offsetMinutes > 59) return false;
  if (second === 60) {
    const sign = m[7] === "-" ? -1 : 1;
    const utcMinutes = (((hour * 60 + minute - sign * (offsetHours * 60 + offsetMinutes)) % 1440) + 1440) % 1440;
    return utcMinutes === 23 * 60 + 59;
  }
  return true;
}

/** The formats table the precompiled validators read (`formats["date-time"]`). */
export const formats: { readonly [name: string]: (value: string) => boolean } = {
  "date-time": isDateTime,
};
