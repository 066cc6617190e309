# The sun at an instant from the astral package (PyPI), an independent reference for the schedule's plan.
# Reads "latitude longitude UNIX" lines; prints for each "up" or "down" (the sun's upper limb above the
# horizon then, by its elevation at that instant), the next crossing of the horizon within four days, as
# "rise UNIX", "set UNIX" or "none none", and the time of the last one before it (or "none"), from astral's
# sunrise and sunset of the UTC dates around it.
import datetime
import sys

from astral import Observer
from astral.sun import elevation, sunrise, sunset

UTC = datetime.timezone.utc

for line in sys.stdin:
    lat, lon, unix = line.split()
    observer = Observer(latitude=float(lat), longitude=float(lon))
    now = datetime.datetime.fromtimestamp(int(unix), UTC)
    up = elevation(observer, now, with_refraction=False) > -0.789
    crossings = set()
    for k in range(-2, 6):
        date = (now + datetime.timedelta(days=k)).date()
        for kind, event in (("rise", sunrise), ("set", sunset)):
            try:
                crossings.add((int(event(observer, date).timestamp()), kind))
            except ValueError:
                pass
    ahead = sorted(c for c in crossings if int(unix) < c[0] <= int(unix) + 4 * 86_400)
    behind = sorted(c for c in crossings if c[0] <= int(unix))
    nxt = f"{ahead[0][1]} {ahead[0][0]}" if ahead else "none none"
    print("up" if up else "down", nxt, behind[-1][0] if behind else "none", flush=True)
