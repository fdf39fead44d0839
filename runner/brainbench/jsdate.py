"""JavaScript ``Date`` values and ``Date.parse`` as gbrain's runtime has them.

gbrain runs on bun, whose ``Date`` is JavaScriptCore's.  A ``Date`` is a time value (ms
since the epoch, UTC) or invalid; ``Date.UTC`` rolls impossible fields forward (Feb 30 is
Mar 1) and reads years 0–99 as 1900–1999.  The local time zone is taken to be UTC, as in
gbrain's CI and in every container this project starts: ``String(date)`` then prints
``GMT+0000 (Coordinated Universal Time)``, and a date-time without an offset is UTC.

``parse`` is ``Date.parse``: the ES date-time format first, then JavaScriptCore's legacy
fallback (RFC 2822 and the other forms browsers accept).  What it refuses is ``None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["JSDate", "make_time_value", "parse"]

MS_PER_DAY = 86_400_000
MAX_TIME = 8.64e15
_WEEKDAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (month 1–12), any year."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    return yoe + era * 400 + (month <= 2), month, day


def make_time_value(year: float, month: float, day: float = 1, hour: float = 0, minute: float = 0,
                    second: float = 0, ms: float = 0, *, two_digit_years: bool = True) -> float:
    """``Date.UTC(year, month0, day, …)``: fields roll over; NaN when out of range.

    ``two_digit_years``: Date.UTC's rule that a year 0–99 means 1900–1999.
    """
    fields = (year, month, day, hour, minute, second, ms)
    if not all(math.isfinite(f) for f in fields):
        return math.nan
    year, month, day, hour, minute, second, ms = (math.trunc(f) for f in fields)
    if two_digit_years and 0 <= year <= 99:
        year += 1900
    ym = year + month // 12
    mn = month % 12
    days = _days_from_civil(int(ym), int(mn) + 1, 1) + day - 1
    value = days * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms
    return float(value) if abs(value) <= MAX_TIME else math.nan


@dataclass(frozen=True)
class JSDate:
    """A ``Date`` object: its time value in ms (NaN when invalid)."""

    time: float

    @property
    def valid(self) -> bool:
        return math.isfinite(self.time)

    def _fields(self) -> tuple[int, int, int, int, int, int, int, int]:
        t = int(self.time)
        days, ms_of_day = divmod(t, MS_PER_DAY)
        year, month, day = _civil_from_days(days)
        hour, rest = divmod(ms_of_day, 3_600_000)
        minute, rest = divmod(rest, 60_000)
        second, ms = divmod(rest, 1000)
        weekday = (days + 4) % 7  # 1970-01-01 was a Thursday
        return year, month, day, hour, minute, second, ms, weekday

    def iso(self) -> str:
        """``toISOString()`` (raises ValueError for an invalid date, as JS throws RangeError)."""
        if not self.valid:
            raise ValueError("Invalid time value")
        year, month, day, hour, minute, second, ms, _ = self._fields()
        ys = f"{year:04d}" if 0 <= year <= 9999 else f"{'+' if year > 0 else '-'}{abs(year):06d}"
        return f"{ys}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{ms:03d}Z"

    def to_json(self) -> str | None:
        """``JSON.stringify(date)``: the ISO string, or null when invalid."""
        return self.iso() if self.valid else None

    def to_string(self) -> str:
        """``String(date)`` in the UTC zone."""
        if not self.valid:
            return "Invalid Date"
        year, month, day, hour, minute, second, _, weekday = self._fields()
        ys = f"{year:04d}" if year >= 0 else f"-{abs(year):04d}"
        return (f"{_WEEKDAYS[weekday]} {_MONTHS[month - 1]} {day:02d} {ys} {hour:02d}:{minute:02d}:{second:02d}"
                " GMT+0000 (Coordinated Universal Time)")

    def to_datetime(self) -> datetime:
        """The instant as an aware UTC ``datetime`` (years 1–9999 only)."""
        year, month, day, hour, minute, second, ms, _ = self._fields()
        return datetime(year, month, day, hour, minute, second, ms * 1000, tzinfo=UTC)


# --- Date.parse -------------------------------------------------------------------------------
#
# bun's Date.parse answers exactly as V8's (Node's) does -- checked on 13,000 strings, see
# tests/data/fidelity30/PROVENANCE.md -- so this follows V8's date parser: the ES5
# date-time format first ("YYYY[-MM[-DD]][THH:mm[:ss[.sss]][Z|±hh:mm]]"), and whatever it
# leaves over read by the legacy rules browsers share: words before the first number are
# ignored, month names count by their first three letters, "(…)" is a comment, a number
# followed by ":" is a time, AM/PM, UTC/GMT/Z and the US zone names, ±hhmm offsets, and
# two-digit years 00–49 → 20xx, 50–99 → 19xx.  A date-time with no zone is local time,
# which here is UTC (see the module docstring).

_MAX_DIGITS = 9  # digits beyond the ninth are read but not counted


class _Kind:
    END, NUMBER, SYMBOL, WORD, SPACE, UNKNOWN, INVALID = range(7)


class _Word:
    NONE, MONTH, ZONE, T, AMPM = range(5)


_KEYWORDS: tuple[tuple[str, int, int], ...] = (
    *((m, _Word.MONTH, i + 1) for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                                    "sep", "oct", "nov", "dec"))),
    ("am", _Word.AMPM, 0), ("pm", _Word.AMPM, 12),
    ("ut", _Word.ZONE, 0), ("utc", _Word.ZONE, 0), ("z", _Word.ZONE, 0), ("gmt", _Word.ZONE, 0),
    ("cdt", _Word.ZONE, -5), ("cst", _Word.ZONE, -6), ("edt", _Word.ZONE, -4), ("est", _Word.ZONE, -5),
    ("mdt", _Word.ZONE, -6), ("mst", _Word.ZONE, -7), ("pdt", _Word.ZONE, -7), ("pst", _Word.ZONE, -8),
    ("t", _Word.T, 0),
)
_NONE = 2**31 - 1  # "no value" in a composer slot


@dataclass(frozen=True)
class _Token:
    kind: int
    value: int = 0  # a number's value, a symbol's character, a word's keyword value
    length: int = 0
    word: int = _Word.NONE

    def is_number(self, length: int | None = None) -> bool:
        return self.kind == _Kind.NUMBER and (length is None or self.length == length)

    def is_symbol(self, char: str) -> bool:
        return self.kind == _Kind.SYMBOL and self.value == ord(char)

    @property
    def is_sign(self) -> bool:
        return self.kind == _Kind.SYMBOL and self.value in (0x2B, 0x2D)

    @property
    def sign(self) -> int:
        return 1 if self.value == 0x2B else -1

    @property
    def is_z(self) -> bool:
        return self.kind == _Kind.WORD and self.word == _Word.ZONE and self.length == 1 and self.value == 0


_WHITESPACE_UNITS = frozenset(ord(c) for c in "\t\n\x0b\x0c\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
                              ) | frozenset(range(0x2000, 0x200B))


class _Scanner:
    """The date's UTF-16 code units as tokens, one token of look-ahead."""

    def __init__(self, text: str) -> None:
        raw = text.encode("utf-16-le", "surrogatepass")
        self.units = [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]
        self.pos = 0
        self.next = self._scan()

    def _ch(self) -> int:
        return self.units[self.pos] if self.pos < len(self.units) else 0

    def _scan(self) -> _Token:
        ch = self._ch()
        if self.pos >= len(self.units) or ch == 0:
            return _Token(_Kind.END)
        start = self.pos
        if 0x30 <= ch <= 0x39:
            value = digits = 0
            while 0x30 <= self._ch() <= 0x39 and self.pos < len(self.units):
                if digits < _MAX_DIGITS:
                    value = value * 10 + self._ch() - 0x30
                digits += 1
                self.pos += 1
            return _Token(_Kind.NUMBER, value, self.pos - start)
        if ch in (0x3A, 0x2D, 0x2B, 0x2E, 0x29):  # : - + . )
            self.pos += 1
            return _Token(_Kind.SYMBOL, ch, 1)
        if ch >= 0x41 and ch not in _WHITESPACE_UNITS:  # a "word": anything else from 'A' up
            prefix = []
            while self.pos < len(self.units) and self._ch() >= 0x41 and self._ch() not in _WHITESPACE_UNITS:
                if len(prefix) < 3:
                    prefix.append(self._ch() | 0x20)
                self.pos += 1
            length = self.pos - start
            key = "".join(map(chr, prefix))
            for name, word, value in _KEYWORDS:
                if key == name and (length <= 3 or word == _Word.MONTH):
                    return _Token(_Kind.WORD, value, length, word)
            return _Token(_Kind.WORD, 0, length, _Word.NONE)
        if ch in _WHITESPACE_UNITS:
            self.pos += 1
            return _Token(_Kind.SPACE, 0, 1)
        if ch == 0x28:  # "(": skip to the matching ")" (or the end)
            balance = 0
            while True:
                c = self._ch()
                if c == 0x29:
                    balance -= 1
                elif c == 0x28:
                    balance += 1
                self.pos += 1
                if balance <= 0 or self.pos >= len(self.units) or self._ch() == 0:
                    break
            return _Token(_Kind.UNKNOWN)
        self.pos += 1
        return _Token(_Kind.UNKNOWN)

    def take(self) -> _Token:
        token, self.next = self.next, self._scan()
        return token

    def skip_symbol(self, char: str) -> bool:
        if self.next.is_symbol(char):
            self.next = self._scan()
            return True
        return False


def _between(x: int, lo: int, hi: int) -> bool:
    return lo <= x <= hi


class _Day:
    def __init__(self) -> None:
        self.parts: list[int] = []
        self.named_month = _NONE
        self.iso = False

    def add(self, n: int) -> bool:
        if len(self.parts) >= 3:
            return False
        self.parts.append(n)
        return True

    def result(self) -> tuple[int, int, int] | None:
        if not self.parts:
            return None
        # Missing parts are 1, and from then on every date has three (V8 pads before it looks).
        comp = self.parts + [1] * (3 - len(self.parts))
        if self.named_month == _NONE:
            if self.iso or not _between(comp[0], 1, 31):
                year, month, day = comp
            else:
                month, day, year = comp
        else:
            month = self.named_month
            if not _between(comp[0], 1, 31):
                year, day = comp[0], comp[1]
            else:
                day, year = comp[0], comp[1]
        if not self.iso:
            if _between(year, 0, 49):
                year += 2000
            elif _between(year, 50, 99):
                year += 1900
        if not _between(month, 1, 12) or not _between(day, 1, 31):
            return None
        return year, month - 1, day


class _Time:
    def __init__(self) -> None:
        self.parts: list[int] = []
        self.hour_offset = _NONE

    @property
    def empty(self) -> bool:
        return not self.parts

    def expecting(self, n: int) -> bool:
        i = len(self.parts)
        return (i == 1 and _between(n, 0, 59)) or (i == 2 and _between(n, 0, 59)) or (i == 3 and _between(n, 0, 999))

    def add(self, n: int) -> bool:
        if len(self.parts) >= 4:
            return False
        self.parts.append(n)
        return True

    def add_final(self, n: int) -> bool:
        if not self.add(n):
            return False
        self.parts += [0] * (4 - len(self.parts))
        return True

    def result(self) -> tuple[int, int, int, int] | None:
        hour, minute, second, ms = self.parts + [0] * (4 - len(self.parts))
        if self.hour_offset != _NONE:
            if not _between(hour, 0, 12):
                return None
            hour = hour % 12 + self.hour_offset
        if not (_between(hour, 0, 23) and _between(minute, 0, 59) and _between(second, 0, 59)
                and _between(ms, 0, 999)) and (hour != 24 or minute or second or ms):
            return None
        return hour, minute, second, ms


class _Zone:
    def __init__(self) -> None:
        self.sign = _NONE
        self.hour = _NONE
        self.minute = _NONE

    def set(self, hours: int) -> None:
        self.sign = -1 if hours < 0 else 1
        self.hour = hours * self.sign
        self.minute = 0

    def expecting(self, n: int) -> bool:
        return self.hour != _NONE and self.minute == _NONE and _between(n, 0, 59)

    @property
    def is_utc(self) -> bool:
        return self.hour == 0 and self.minute == 0

    @property
    def empty(self) -> bool:
        return self.hour == _NONE

    def seconds(self) -> int | bool | None:
        """The offset in seconds; None when absent (local time); False when out of range."""
        if self.sign == _NONE:
            return None
        total = (0 if self.hour == _NONE else self.hour) * 3600 + (0 if self.minute == _NONE else self.minute) * 60
        if total > 2**30 - 1:
            return False
        return -total if self.sign < 0 else total


def _milliseconds(token: _Token) -> int:
    n, length = token.value, token.length
    if length == 1:
        return n * 100
    if length == 2:
        return n * 10
    return n // 10 ** (min(length, _MAX_DIGITS) - 3)


def _es5(sc: _Scanner, day: _Day, time: _Time, zone: _Zone) -> _Token:
    """The ES5 date-time format: END when it read the whole string, INVALID to refuse, else the
    token the legacy rules go on from."""
    if sc.next.is_sign:
        sign = sc.take()
        if not sc.next.is_number(6):
            return sign
        year = sc.take().value
        if sign.sign < 0 and year == 0:
            return sign
        day.add(sign.sign * year)
    elif sc.next.is_number(4):
        day.add(sc.take().value)
    else:
        return sc.take()
    if sc.skip_symbol("-"):
        if not sc.next.is_number(2) or not _between(sc.next.value, 1, 12):
            return sc.take()
        day.add(sc.take().value)
        if sc.skip_symbol("-"):
            if not sc.next.is_number(2) or not _between(sc.next.value, 1, 31):
                return sc.take()
            day.add(sc.take().value)
    if not (sc.next.kind == _Kind.WORD and sc.next.word == _Word.T):
        if sc.next.kind != _Kind.END:
            return sc.take()
    else:
        invalid = _Token(_Kind.INVALID)
        sc.take()
        if not sc.next.is_number(2) or not _between(sc.next.value, 0, 24):
            return invalid
        hour_24 = sc.next.value == 24
        time.add(sc.take().value)
        if not sc.skip_symbol(":"):
            return invalid
        if not sc.next.is_number(2) or not _between(sc.next.value, 0, 59) or (hour_24 and sc.next.value > 0):
            return invalid
        time.add(sc.take().value)
        if sc.skip_symbol(":"):
            if not sc.next.is_number(2) or not _between(sc.next.value, 0, 59) or (hour_24 and sc.next.value > 0):
                return invalid
            time.add(sc.take().value)
            if sc.skip_symbol("."):
                if not sc.next.is_number() or (hour_24 and sc.next.value > 0):
                    return invalid
                time.add(_milliseconds(sc.take()))
        if sc.next.is_z:
            sc.take()
            zone.set(0)
        elif sc.next.is_symbol("+") or sc.next.is_symbol("-"):
            zone.sign = sc.take().sign
            if sc.next.is_number(4):
                hour, minute = divmod(sc.take().value, 100)
                if not _between(hour, 0, 23) or not _between(minute, 0, 59):
                    return invalid
                zone.hour, zone.minute = hour, minute
            else:
                if not sc.next.is_number(2) or not _between(sc.next.value, 0, 23):
                    return invalid
                zone.hour = sc.take().value
                if not sc.skip_symbol(":"):
                    return invalid
                if not sc.next.is_number(2) or not _between(sc.next.value, 0, 59):
                    return invalid
                zone.minute = sc.take().value
        if sc.next.kind != _Kind.END:
            return invalid
    if zone.empty and time.empty:
        zone.set(0)  # a date-only form is UTC
    day.iso = True
    return _Token(_Kind.END)


def _parse_fields(text: str) -> tuple[tuple[int, int, int], tuple[int, int, int, int], int | None] | None:
    sc = _Scanner(text)
    day, time, zone = _Day(), _Time(), _Zone()
    token = _es5(sc, day, time, zone)
    if token.kind == _Kind.INVALID:
        return None
    has_number = bool(day.parts)
    while token.kind != _Kind.END:
        if token.kind == _Kind.NUMBER:
            has_number = True
            n = token.value
            if sc.skip_symbol(":"):
                if sc.skip_symbol(":"):
                    if not time.empty:
                        return None
                    time.add(n)
                    time.add(0)
                else:
                    if not time.add(n):
                        return None
                    if sc.next.is_symbol("."):
                        sc.take()
            elif sc.skip_symbol(".") and time.expecting(n):  # the "." is consumed either way
                time.add(n)
                if not sc.next.is_number():
                    return None
                time.add_final(_milliseconds(sc.take()))
            elif zone.expecting(n):
                zone.minute = n
            elif time.expecting(n):
                time.add_final(n)
                peek = sc.next
                if peek.kind not in (_Kind.END, _Kind.SPACE) and not peek.is_z and not peek.is_sign:
                    return None
            else:
                if not day.add(n):
                    return None
                sc.skip_symbol("-")
        elif token.kind == _Kind.WORD:
            if token.word == _Word.AMPM and not time.empty:
                time.hour_offset = token.value
            elif token.word == _Word.MONTH:
                day.named_month = token.value
                sc.skip_symbol("-")
            elif token.word == _Word.ZONE and has_number:
                zone.set(token.value)
            else:
                if has_number or sc.next.is_number():
                    return None  # a stray word after a number, or glued to one
        elif token.is_sign and (zone.is_utc or not time.empty):
            zone.sign = token.sign
            n = length = 0
            if sc.next.is_number():
                number = sc.take()
                n, length = number.value, number.length
            has_number = True
            if sc.next.is_symbol(":"):
                zone.hour, zone.minute = n, _NONE
            elif length in (1, 2):
                zone.hour, zone.minute = n, 0
            elif length in (3, 4):
                zone.hour, zone.minute = n // 100, n % 100
            else:
                return None
        elif (token.is_sign or token.is_symbol(")")) and has_number:
            return None
        token = sc.take()
    ymd, hms, offset = day.result(), time.result(), zone.seconds()
    if ymd is None or hms is None or offset is False:
        return None
    return ymd, hms, offset  # type: ignore[return-value]


def parse(text: str) -> float | None:
    """``Date.parse(text)``: ms since the epoch, or None where JavaScript gives NaN."""
    fields = _parse_fields(text)
    if fields is None:
        return None
    (year, month, day), (hour, minute, second, ms), offset = fields
    value = make_time_value(year, month, day, hour, minute, second, ms, two_digit_years=False)
    if math.isnan(value):
        return None
    if offset is not None:
        value -= offset * 1000
    if abs(value) > MAX_TIME:
        return None
    return value
