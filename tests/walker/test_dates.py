"""lastmod parsing: every W3C Datetime form, RFC 822 for RSS, and everything that must be None."""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.walker import ParsedDate, parse_rfc822, parse_w3c
from auditor.walker.dates import w3c_text


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def assert_parsed(parsed: ParsedDate | None, value: datetime, precision: str) -> None:
    """Same instant, stored as aware UTC (offset zero), with the right precision."""
    assert parsed is not None
    assert parsed.value == value
    assert parsed.value.tzinfo is not None
    assert parsed.value.utcoffset() == timedelta(0)
    assert parsed.precision == precision


# -- every W3C Datetime form ---------------------------------------------------------------------

W3C_FORMS = [
    # text, expected UTC instant, precision
    ("2026", utc(2026, 1, 1), "year"),
    ("2026-10", utc(2026, 10, 1), "month"),
    ("2026-10-05", utc(2026, 10, 5), "day"),
    ("2026-10-05T10:30Z", utc(2026, 10, 5, 10, 30), "minute"),
    ("2026-10-05T10:30+02:00", utc(2026, 10, 5, 8, 30), "minute"),
    ("2026-10-05T10:30-05:00", utc(2026, 10, 5, 15, 30), "minute"),
    ("2026-10-05T10:30:15Z", utc(2026, 10, 5, 10, 30, 15), "second"),
    ("2026-10-05T10:30:00Z", utc(2026, 10, 5, 10, 30), "second"),  # :00 still says seconds
    ("2026-10-05T10:30:15+00:00", utc(2026, 10, 5, 10, 30, 15), "second"),
    ("2026-10-05T10:30:15-00:00", utc(2026, 10, 5, 10, 30, 15), "second"),
    ("2026-10-05T10:30:15+05:45", utc(2026, 10, 5, 4, 45, 15), "second"),
    ("2026-10-05T10:30:15-03:30", utc(2026, 10, 5, 14, 0, 15), "second"),
    ("2026-10-05T10:30:15.5Z", utc(2026, 10, 5, 10, 30, 15, 500_000), "fraction"),
    ("2026-10-05T10:30:15.25+01:00", utc(2026, 10, 5, 9, 30, 15, 250_000), "fraction"),
    ("2026-10-05T10:30:15.123456Z", utc(2026, 10, 5, 10, 30, 15, 123_456), "fraction"),
    ("2026-10-05T10:30:15.000Z", utc(2026, 10, 5, 10, 30, 15), "fraction"),
    # more digits than a microsecond: truncated, never rounded up
    ("2026-10-05T10:30:15.123456789Z", utc(2026, 10, 5, 10, 30, 15, 123_456), "fraction"),
    ("2026-10-05T10:30:15.9999999Z", utc(2026, 10, 5, 10, 30, 15, 999_999), "fraction"),
    # an offset moves the instant across a day, a month and a year boundary
    ("2026-01-01T00:30+01:00", utc(2025, 12, 31, 23, 30), "minute"),
    ("2025-12-31T23:30:00-01:00", utc(2026, 1, 1, 0, 30), "second"),
    ("2024-02-29", utc(2024, 2, 29), "day"),  # leap day
    ("2026-10-05T23:59:59Z", utc(2026, 10, 5, 23, 59, 59), "second"),
]


@pytest.mark.parametrize(("text", "value", "precision"), W3C_FORMS, ids=[f[0] for f in W3C_FORMS])
def test_every_w3c_form_parses_to_utc_with_its_precision(text, value, precision):
    assert_parsed(parse_w3c(text), value, precision)


def test_surrounding_whitespace_is_allowed():
    assert_parsed(parse_w3c("  2026-10-05\n"), utc(2026, 10, 5), "day")
    assert_parsed(parse_w3c("\t2026-10-05T10:30:15Z \r\n"), utc(2026, 10, 5, 10, 30, 15), "second")


def test_a_short_form_never_invents_a_month_or_day():
    """The start of its period, whatever today is: never today's month or day."""
    now = datetime.now(UTC)
    year = parse_w3c(str(now.year))
    assert year is not None
    assert (year.value.month, year.value.day, year.value.hour) == (1, 1, 0)
    assert year.precision == "year"
    month = parse_w3c(f"{now.year:04d}-{now.month:02d}")
    assert month is not None
    assert (month.value.month, month.value.day, month.value.hour) == (now.month, 1, 0)
    assert month.precision == "month"
    day = parse_w3c(f"{now.year:04d}-{now.month:02d}-{now.day:02d}")
    assert day is not None
    assert (day.value.hour, day.value.minute, day.value.second) == (0, 0, 0)
    assert day.precision == "day"


INVALID_W3C = [
    "15/10/2026",  # day/month/year
    "10/15/2026",
    "yesterday",
    "last week",
    "2026-02-30",  # no such day
    "2025-02-29",  # not a leap year
    "2026-04-31",
    "2026-13-01",  # no such month
    "2026-00",
    "2026-10-00",
    "0000",  # no year zero in a datetime
    "2026-10-05T24:00Z",  # 24:00 is not a time of day here
    "2026-10-05T10:60Z",
    "2026-10-05T10:30:60Z",
    "2026-10-05T10:30",  # a time needs its zone
    "2026-10-05T10:30:15",
    "2026-10-05T10:30:15.5",
    "2026-10-05T10:30:15+24:00",  # offset out of range
    "2026-10-05T10:30:15+02:60",
    "2026-10-05T10:30:15+0200",  # offset without a colon
    "2026-10-05T10:30:15 +02:00",
    "2026-10-05 10:30:15Z",  # space instead of T
    "2026-10-05T10Z",  # hour alone
    "2026-10-05T10:30.5Z",  # fraction without seconds
    "2026-10-05T10:30:15.Z",  # a dot with no digits
    "2026-1-5",  # one-digit month and day
    "20261005",  # basic ISO 8601, not W3C
    "26-10-05",
    "+2026",
    "2026-10-05Z",  # a zone on a date alone
    "２０２６-１０-０５",  # fullwidth digits
    "٢٠٢٦-١٠-٠٥",  # Arabic-Indic digits
    "2026-10-0５",  # one fullwidth digit hidden in the day
    "2026-10-05T1٠:30Z",
    "Mon, 05 Oct 2026 10:30:00 GMT",  # RFC 822 is not W3C
    "",
    "   ",
    "null",
    "2026-10-05T10:30:15Z garbage",
]


@pytest.mark.parametrize("text", INVALID_W3C)
def test_invalid_w3c_values_are_none(text):
    assert parse_w3c(text) is None


# -- RFC 822 (RSS pubDate) ---------------------------------------------------------------------

RFC822_FORMS = [
    ("Mon, 05 Oct 2026 10:30:00 GMT", utc(2026, 10, 5, 10, 30)),
    ("Mon, 05 Oct 2026 10:30:00 +0200", utc(2026, 10, 5, 8, 30)),
    ("Mon, 05 Oct 2026 10:30:00 -0500", utc(2026, 10, 5, 15, 30)),
    ("Mon, 05 Oct 2026 10:30:00 UT", utc(2026, 10, 5, 10, 30)),
    ("Mon, 05 Oct 2026 10:30:00 EST", utc(2026, 10, 5, 15, 30)),
    ("Mon, 05 Oct 2026 10:30:00 PDT", utc(2026, 10, 5, 17, 30)),
    ("Mon, 05 Oct 2026 10:30:00 -0000", utc(2026, 10, 5, 10, 30)),
    ("05 Oct 2026 10:30:00 GMT", utc(2026, 10, 5, 10, 30)),  # weekday is optional
    ("Mon, 05 Oct 26 10:30:00 GMT", utc(2026, 10, 5, 10, 30)),  # two-digit year
    ("Mon, 5 Oct 2026 10:30 GMT", utc(2026, 10, 5, 10, 30)),  # seconds are optional
    ("  Mon, 05 Oct 2026 10:30:00 GMT  ", utc(2026, 10, 5, 10, 30)),
]


@pytest.mark.parametrize(("text", "value"), RFC822_FORMS, ids=[f[0] for f in RFC822_FORMS])
def test_rfc822_dates_parse_to_utc(text, value):
    assert_parsed(parse_rfc822(text), value, "second")


@pytest.mark.parametrize(
    "text",
    [
        "incorrect",
        "yesterday",
        "",
        "15/10/2026",
        "Mon, 32 Oct 2026 10:30:00 GMT",
        "Mon, 05 Foo 2026 10:30:00 GMT",
        "Mon, 05 Oct 2026 25:30:00 GMT",
    ],
)
def test_invalid_rfc822_values_are_none(text):
    assert parse_rfc822(text) is None


# -- the crawler-commons corpus ----------------------------------------------------------------


def _corpus_rows(corpus):
    path = corpus / "lastmod_format_cases_crawler_commons.tsv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows, "the corpus file has no rows"
    return rows


def _expected(text: str) -> datetime | None:
    if "unparseable" in text or "incorrect" in text:
        return None
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def test_crawler_commons_corpus(corpus):
    """W3C rows through parse_w3c, RSS rows through parse_rfc822; "unparseable" rows are None."""
    rows = _corpus_rows(corpus)
    checked = {"w3c": 0, "rss": 0, "none": 0}
    failures = []
    for row in rows:
        text, expected_text = row["input"], row["expected_utc_or_result"]
        is_rss = "RSS" in row["granularity_checked"]
        parsed = (parse_rfc822 if is_rss else parse_w3c)(text)
        expected = _expected(expected_text)
        checked["rss" if is_rss else "w3c"] += 1
        if expected is None:
            checked["none"] += 1
            if parsed is not None:
                failures.append((text, expected_text, parsed))
            continue
        if (
            parsed is None
            or parsed.value != expected
            or parsed.value.utcoffset() != timedelta(0)
            or (is_rss and parsed.precision != "second")
        ):
            failures.append((text, expected_text, parsed))
    assert failures == []
    assert checked["w3c"] >= 10 and checked["rss"] >= 5 and checked["none"] >= 2


def test_crawler_commons_corpus_precisions(corpus):
    """The W3C rows' precision follows how much of the date was written."""
    expected_precision = {4: "year", 7: "month", 10: "day"}
    for row in _corpus_rows(corpus):
        text = row["input"]
        if "RSS" in row["granularity_checked"]:
            continue
        parsed = parse_w3c(text)
        if parsed is None:
            continue
        if len(text) in expected_precision:
            assert parsed.precision == expected_precision[len(text)], text
        elif "." in text:
            assert parsed.precision == "fraction", text
        elif text.count(":") == 3:  # hh:mm:ss and the zone's colon
            assert parsed.precision == "second", text
        else:
            assert parsed.precision == "minute", text


# -- properties ---------------------------------------------------------------------------------

# Whole-minute offsets (W3C TZD is ±hh:mm), up to ±23:59.
offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
# Years 2..9998 so the UTC instant of any offset stays inside datetime's range.
aware_datetimes = st.builds(
    lambda naive, tz: naive.replace(tzinfo=tz),
    st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31, 23, 59, 59)),
    offsets,
)


def _tzd(value: datetime, style: str) -> str:
    offset = value.utcoffset()
    assert offset is not None
    minutes = int(offset.total_seconds()) // 60
    if minutes == 0 and style == "Z":
        return "Z"
    if minutes == 0 and style == "-00:00":
        return "-00:00"
    sign = "-" if minutes < 0 else "+"
    hours, mins = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{mins:02d}"


@settings(max_examples=300, deadline=None, database=None)
@given(
    value=aware_datetimes,
    form=st.sampled_from(["year", "month", "day", "minute", "second", "fraction"]),
    digits=st.integers(min_value=1, max_value=9),
    zone_style=st.sampled_from(["Z", "+00:00", "-00:00"]),
)
def test_any_aware_datetime_round_trips_in_every_w3c_form(value, form, digits, zone_style):
    """Formatted in one W3C form, a datetime comes back as its UTC instant cut to that form."""
    tzd = _tzd(value, zone_style)
    date = f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if form == "year":
        text, local = f"{value.year:04d}", datetime(value.year, 1, 1)
    elif form == "month":
        text, local = f"{value.year:04d}-{value.month:02d}", datetime(value.year, value.month, 1)
    elif form == "day":
        text, local = date, datetime(value.year, value.month, value.day)
    elif form == "minute":
        text = f"{date}T{value.hour:02d}:{value.minute:02d}{tzd}"
        local = value.replace(second=0, microsecond=0, tzinfo=None)
    elif form == "second":
        text = f"{date}T{value:%H:%M:%S}{tzd}"
        local = value.replace(microsecond=0, tzinfo=None)
    else:
        fraction = f"{value.microsecond:06d}{'7' * 3}"[:digits]
        text = f"{date}T{value:%H:%M:%S}.{fraction}{tzd}"
        kept = int((fraction + "000000")[:6])
        local = value.replace(microsecond=kept, tzinfo=None)
    if form in ("year", "month", "day"):
        expected = local.replace(tzinfo=UTC)  # a date has no zone: the start of its UTC period
    else:
        expected = local.replace(tzinfo=value.tzinfo).astimezone(UTC)
    assert_parsed(parse_w3c(text), expected, form)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text())
def test_parse_never_raises_on_arbitrary_text(text):
    w3c = parse_w3c(text)
    rfc = parse_rfc822(text)
    for parsed in (w3c, rfc):
        assert parsed is None or parsed.value.utcoffset() == timedelta(0)


# Text that looks like a date, to reach the parsers' deeper branches.
date_like = st.lists(
    st.sampled_from(
        [
            *"0123456789-:+.TZtz /,",
            *["GMT", "UT", "EST", "PDT", "Mon", "Oct", "Feb", "\u0660", "\uff10", "\t"],
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=500, deadline=None, database=None)
@given(date_like)
def test_parse_never_raises_on_date_like_text(text):
    for parsed in (parse_w3c(text), parse_rfc822(text)):
        assert parsed is None or (
            parsed.value.utcoffset() == timedelta(0)
            and parsed.precision in ("year", "month", "day", "minute", "second", "fraction")
        )


# The fast path (separator checks + datetime.fromisoformat) must accept exactly what
# the general W3C parser accepts, with the same value and precision.
_DATEISH = st.text(alphabet="0123456789-:T.Z+zt ,W\u0662\u00a0", min_size=15, max_size=34)


@settings(max_examples=3000, deadline=None)
@given(_DATEISH)
def test_fast_timestamp_path_agrees_with_the_general_parser(text):
    from auditor.walker.dates import _parse_w3c_general

    assert parse_w3c(text) == _parse_w3c_general(text.strip())


@settings(max_examples=2000, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(1000, 1, 1), max_value=datetime(9998, 12, 31), timezones=st.just(UTC)
    ),
    st.sampled_from(["Z", "+00:00", "-05:30", "+23:59", "+14:00"]),
    st.sampled_from(["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f"]),
)
def test_fast_timestamp_path_agrees_on_valid_stamps(moment, zone, pattern):
    from auditor.walker.dates import _parse_w3c_general

    text = moment.strftime(pattern) + zone
    assert parse_w3c(text) == _parse_w3c_general(text)


# -- w3c_text: what the writers print, without formatting a datetime --------------------------


def expected_text(text: str) -> tuple[str, str] | None:
    parsed = parse_w3c(text)
    return None if parsed is None else (parsed.value.isoformat(), parsed.precision)


@pytest.mark.parametrize("text", [f[0] for f in W3C_FORMS])
def test_w3c_text_is_isoformat_of_the_parsed_value(text):
    assert w3c_text(text) == expected_text(text)


@settings(max_examples=3000, deadline=None)
@given(_DATEISH)
def test_w3c_text_agrees_with_parse_w3c_on_date_like_text(text):
    assert w3c_text(text) == expected_text(text)


@settings(max_examples=3000, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    st.sampled_from(["Z", "+00:00", "-00:00", "+02:00", "-05:00", "-05:30", "+23:59", "+14:00"]),
    st.sampled_from(
        ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.000"]
    ),
    st.integers(min_value=0, max_value=6),
)
def test_w3c_text_agrees_with_parse_w3c_on_valid_stamps(moment, zone, pattern, cut):
    text = moment.strftime(pattern)
    if pattern.endswith("%f"):
        text = text[: len(text) - cut]  # 1 to 6 fraction digits
    text += zone
    assert w3c_text(text) == expected_text(text)


def test_w3c_text_at_the_ends_of_the_calendar():
    for text in ("0001-01-01T00:30+01:00", "9999-12-31T23:30-01:00", "0001-01-01T00:00:00Z"):
        assert w3c_text(text) == expected_text(text)


def test_a_day_moved_by_one_is_the_calendars_next_or_previous_day():
    # within a month by table, across months and years by the calendar
    from datetime import date

    from auditor.walker.dates import _moved

    days = [date(1999, 12, 1) + timedelta(days=n) for n in range(800)]
    days += [date(2400, 2, 27) + timedelta(days=n) for n in range(4)]
    for day in days:
        assert _moved(day.isoformat(), 1) == (day + timedelta(days=1)).isoformat()
        assert _moved(day.isoformat(), -1) == (day - timedelta(days=1)).isoformat()
    assert _moved("0001-01-01", -1) is None
    assert _moved("9999-12-31", 1) is None
