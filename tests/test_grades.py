"""gdcourse.grading.grades: reading --due."""

from datetime import datetime, timedelta, timezone

import pytest

from gdcourse.grading.grades import parse_due


def test_a_due_time_is_read_with_its_offset_and_a_z_means_utc():
    assert parse_due("2026-10-01T23:59+02:00") == datetime(2026, 10, 1, 23, 59, tzinfo=timezone(timedelta(hours=2)))
    assert parse_due("2026-10-01T21:59Z") == datetime(2026, 10, 1, 21, 59, tzinfo=timezone.utc)
    assert parse_due("2026-10-01T23:59").tzinfo is None  # local time, decided where it is compared


def test_a_date_alone_is_the_end_of_that_day_and_nothing_is_no_due_time():
    assert parse_due("2026-10-01") == datetime(2026, 10, 1, 23, 59, 59)
    assert parse_due(None) is None and parse_due("") is None


@pytest.mark.parametrize("text", ["tomorrow", "2026-13-01", "01/10/2026"])
def test_a_bad_due_time_is_refused_with_an_example(text):
    with pytest.raises(ValueError, match="2026-10-01T23:59"):
        parse_due(text)
