"""format_duration."""

from outputs.progress import format_duration


def test_format_duration():
    assert format_duration(3725.4) == "1:02:05"
