"""Reads an OTF2 archive with python3-otf2 and prints, as JSON, per location:
its definition (name, group, number of events), the events read by type,
their count, and whether their timestamps never decrease."""
import json
import sys

import otf2


def main(anchor):
    out = {}
    with otf2.reader.open(anchor) as trace:
        defs = trace.definitions
        for loc in defs.locations:
            out[str(loc._ref)] = {
                "name": loc.name,
                "group": loc.group.name,
                "number_of_events": loc.number_of_events,
                "events": 0,
                "kinds": {},
                "monotonic": True,
                "first": None,
                "last": None,
            }
        for loc, ev in trace.events:
            o = out[str(loc._ref)]
            o["events"] += 1
            kind = type(ev).__name__
            o["kinds"][kind] = o["kinds"].get(kind, 0) + 1
            if o["last"] is not None and ev.time < o["last"]:
                o["monotonic"] = False
            if o["first"] is None:
                o["first"] = ev.time
            o["last"] = ev.time
        result = {
            "timer_resolution": trace.timer_resolution,
            "regions": [r.name for r in defs.regions],
            "locations": out,
        }
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
