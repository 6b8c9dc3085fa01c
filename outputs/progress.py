"""How long work took or has left, as progress lines print it."""

import datetime


def format_duration(seconds):
    """Seconds as H:MM:SS."""
    return str(datetime.timedelta(seconds=int(round(seconds))))
