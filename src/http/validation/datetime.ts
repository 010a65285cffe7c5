import { fail, ok, type Outcome } from "./outcome.js";

/**
 * pydantic's lax `datetime`, ported from pydantic-core and speedate 0.17: RFC 3339-ish strings
 * (`T`, `t`, `_` or space between date and time, optional seconds, fraction truncated past 6
 * digits, `Z` or ±HH[:]MM), numbers and numeric strings as Unix timestamps (milliseconds once
 * their magnitude passes 2e10), and a bare date as midnight. A string that fails is retried as a
 * date and the date parser's error is the one reported. Naive datetimes are taken as UTC.
 */

const UNIX_0000 = -62_167_219_200;
const UNIX_9999 = 253_402_300_799;
const MS_WATERSHED = 20_000_000_000;
const I64_MAX = 2n ** 63n - 1n;
const BEFORE_0000 = "dates before 0000 are not supported as unix timestamps";
const AFTER_9999 = "dates after 9999 are not supported as unix timestamps";
const encoder = new TextEncoder();

/** A parsed moment: its instant, and the year Python's `datetime` would hold (which may not be 0). */
interface Moment {
  epochMs: number;
  year: number;
}

interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

function digit(bytes: Uint8Array, index: number): number | undefined {
  const byte = bytes[index];
  return byte !== undefined && byte >= 0x30 && byte <= 0x39 ? byte - 0x30 : undefined;
}

function twoDigits(bytes: Uint8Array, index: number): number | undefined {
  const tens = digit(bytes, index);
  const ones = digit(bytes, index + 1);
  return tens === undefined || ones === undefined ? undefined : tens * 10 + ones;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm). */
function daysFromCivil({ year, month, day }: CalendarDate): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** speedate's `Date::parse_bytes_partial`: the first ten bytes as YYYY-MM-DD, or its error. */
function datePrefix(bytes: Uint8Array): CalendarDate | string {
  if (bytes.length < 10) return "input is too short";
  let year = 0;
  for (let index = 0; index < 4; index++) {
    const value = digit(bytes, index);
    if (value === undefined) return "invalid character in year";
    year = year * 10 + value;
  }
  if (bytes[4] !== 0x2d) return "invalid date separator, expected `-`";
  const month = twoDigits(bytes, 5);
  if (month === undefined) return "invalid character in month";
  if (bytes[7] !== 0x2d) return "invalid date separator, expected `-`";
  const day = twoDigits(bytes, 8);
  if (day === undefined) return "invalid character in day";
  if (month < 1 || month > 12) return "month value is outside expected range of 1-12";
  if (day < 1 || day > daysInMonth(year, month)) return "day value is outside expected range";
  return { year, month, day };
}

/** The `±HH[:]MM` offset in seconds starting at `index`, and where it ends; undefined when malformed. */
function offsetAt(bytes: Uint8Array, index: number): { seconds: number; end: number } | undefined {
  let sign: number;
  let position = index + 1;
  if (bytes[index] === 0x2b) sign = 1;
  else if (bytes[index] === 0x2d) sign = -1;
  // U+2212 MINUS SIGN, which ISO 8601 allows, is the UTF-8 bytes E2 88 92.
  else if (bytes[index] === 0xe2 && bytes[index + 1] === 0x88 && bytes[index + 2] === 0x92) {
    sign = -1;
    position += 2;
  } else return undefined;
  const hours = twoDigits(bytes, position);
  if (hours === undefined) return undefined;
  if (bytes[position + 2] === 0x3a) position += 1;
  const minutes = twoDigits(bytes, position + 2);
  if (minutes === undefined || minutes >= 60) return undefined;
  const seconds = sign * (hours * 3600 + minutes * 60);
  return Math.abs(seconds) >= 86_400 ? undefined : { seconds, end: position + 4 };
}

/** speedate's `DateTime::parse_bytes_rfc3339`; only whether it succeeds matters, its errors are never shown. */
function rfc3339DateTime(bytes: Uint8Array): Moment | undefined {
  const date = datePrefix(bytes);
  if (typeof date === "string" || ![0x54, 0x74, 0x20, 0x5f].includes(bytes[10] ?? 0) || bytes.length - 11 < 5) return undefined;
  const hour = twoDigits(bytes, 11);
  const minute = twoDigits(bytes, 14);
  if (hour === undefined || minute === undefined || bytes[13] !== 0x3a || hour > 23 || minute > 59) return undefined;
  let second = 0;
  let micros = 0;
  let position = 16;
  if (bytes[16] === 0x3a) {
    const value = twoDigits(bytes, 17);
    if (value === undefined || value > 59) return undefined;
    second = value;
    position = 19;
    if (bytes[19] === 0x2e || bytes[19] === 0x2c) {
      let count = 0;
      for (let fractionDigit = digit(bytes, 20); fractionDigit !== undefined; fractionDigit = digit(bytes, 20 + count)) {
        if (count < 6) micros = micros * 10 + fractionDigit;
        count++;
      }
      if (count === 0) return undefined;
      micros *= 10 ** Math.max(0, 6 - count);
      position = 20 + count;
    }
  }
  let offset = 0;
  if (position < bytes.length) {
    if (bytes[position] === 0x5a || bytes[position] === 0x7a) position += 1;
    else {
      const parsed = offsetAt(bytes, position);
      if (parsed === undefined) return undefined;
      offset = parsed.seconds;
      position = parsed.end;
    }
  }
  if (position < bytes.length) return undefined;
  const seconds = daysFromCivil(date) * 86_400 + hour * 3600 + minute * 60 + second - offset;
  return { epochMs: seconds * 1000 + Math.floor(micros / 1000), year: date.year };
}

/** speedate's `Date::parse_bytes_rfc3339`: exactly YYYY-MM-DD, read as midnight. */
function rfc3339Date(bytes: Uint8Array): Moment | string {
  const date = datePrefix(bytes);
  if (typeof date === "string") return date;
  if (bytes.length > 10) return "unexpected extra characters at the end of the input";
  return { epochMs: daysFromCivil(date) * 86_400_000, year: date.year };
}

/** speedate's `DateTime::from_timestamp_with_config`: seconds, or milliseconds once the magnitude passes 2e10. */
function fromTimestamp(timestamp: number, extraMicros: number): Moment | string {
  let seconds = timestamp;
  let micros = extraMicros;
  if (Math.abs(timestamp) > MS_WATERSHED) {
    seconds = Math.floor(timestamp / 1000);
    micros += (timestamp - seconds * 1000) * 1000;
  }
  seconds += Math.floor(micros / 1_000_000);
  micros %= 1_000_000;
  if (seconds < UNIX_0000) return BEFORE_0000;
  if (seconds > UNIX_9999) return AFTER_9999;
  const epochMs = seconds * 1000 + Math.floor(micros / 1000);
  return { epochMs, year: new Date(epochMs).getUTCFullYear() };
}

/**
 * A float timestamp; both ways were measured on pydantic. A JSON number keeps its floor in its own
 * unit and adds the fraction's absolute value (so -1.25 is -1.75 s). A numeric string is first
 * scaled to seconds, rounded above its floor, and then meets the milliseconds watershed again.
 */
function fromFloatTimestamp(timestamp: number, source: "number" | "string"): Moment | string {
  const milliseconds = Math.abs(timestamp) > MS_WATERSHED;
  if (!Number.isFinite(timestamp)) return timestamp > 0 ? AFTER_9999 : BEFORE_0000;
  if (source === "number") return fromTimestamp(Math.floor(timestamp), Math.round(Math.abs(timestamp % 1) * (milliseconds ? 1000 : 1_000_000)));
  const seconds = milliseconds ? timestamp / 1000 : timestamp;
  const whole = Math.floor(seconds);
  return fromTimestamp(whole, Math.round((seconds - whole) * 1_000_000));
}

/** speedate's `float_parse_bytes`: an i64, or (only when the text has a `.`) a float; undefined otherwise. */
function numericText(text: string): { value: number; integer: boolean } | undefined {
  if (text.includes(".")) return /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(text) ? { value: Number(text), integer: false } : undefined;
  if (!/^[+-]?[0-9]+$/.test(text) || BigInt(text.replace(/^[+-]/, "")) > I64_MAX) return undefined;
  return { value: Number(text), integer: true };
}

function finish(moment: Moment): Outcome {
  if (moment.year === 0) return parsingError("year 0 is out of range");
  return ok(new Date(moment.epochMs));
}

function parsingError(error: string): Outcome {
  return fail("datetime_parsing", `Input should be a valid datetime, ${error}`, { error });
}

function fromString(text: string): Outcome {
  const bytes = encoder.encode(text);
  const direct = rfc3339DateTime(bytes);
  if (direct !== undefined) return finish(direct);
  const number = numericText(text);
  const timestamp = number === undefined ? undefined : number.integer ? fromTimestamp(number.value, 0) : fromFloatTimestamp(number.value, "string");
  if (timestamp !== undefined && typeof timestamp !== "string") return finish(timestamp);
  const date = rfc3339Date(bytes);
  if (typeof date !== "string") return finish(date);
  // The date parser reads integer strings as timestamps too; every in-range one already parsed above.
  const error = number?.integer && typeof timestamp === "string" ? timestamp : date;
  return fail("datetime_from_date_parsing", `Input should be a valid datetime or date, ${error}`, { error });
}

function fromNumber(value: number): Outcome {
  if (Number.isNaN(value)) return parsingError("NaN values not permitted");
  const moment = Number.isInteger(value) ? fromTimestamp(value, 0) : fromFloatTimestamp(value, "number");
  return typeof moment === "string" ? parsingError(moment) : finish(moment);
}

/** Validates like pydantic's lax `datetime`; the value becomes a JavaScript `Date`. */
export function validateDateTime(input: unknown): Outcome {
  if (typeof input === "string") return fromString(input);
  if (typeof input === "number") return fromNumber(input);
  return fail("datetime_type", "Input should be a valid datetime");
}
