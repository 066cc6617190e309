# Sunrise and sunset from the astral package (PyPI), the reference the schedule's own computation is
# checked against. Reads "latitude longitude YYYY-MM-DD" lines; prints for each either
# "rise UNIX set UNIX" (the events astral gives for that UTC date) or "up"/"down" for a polar day or night.
import datetime
import sys

from astral import Observer
from astral.sun import elevation, sunrise, sunset

for line in sys.stdin:
    lat, lon, day = line.split()
    observer = Observer(latitude=float(lat), longitude=float(lon))
    date = datetime.date.fromisoformat(day)
    try:
        rise = sunrise(observer, date)
        down = sunset(observer, date)
        print("rise", int(rise.timestamp()), "set", int(down.timestamp()), flush=True)
    except ValueError:
        noon = datetime.datetime.combine(date, datetime.time(12), tzinfo=datetime.timezone.utc) \
            - datetime.timedelta(minutes=4 * float(lon))
        print("up" if elevation(observer, noon, with_refraction=False) > -0.789 else "down", flush=True)
