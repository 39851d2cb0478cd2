"""Reads an OTF2 archive with python3-otf2 and checks its MPI records the
way analysis tools pair them. Prints, as JSON:
- comms: per communicator reference, its name, kind of group, members (as
  location references, in rank order) and parent reference;
- unmatched: sends without a receive and receives without a send, as
  "sender>receiver comm tag length" (locations by reference);
- open_requests: requests started and never completed or cancelled, and
  completions of requests never started, as "location kind request";
- collectives: per location, the collective operations in order, as
  "begin/end op comm root length-sent length-received" (root as a location
  reference or NONE), and whether every begin has its end;
- messages: the number of sends matched."""
import json
import sys
from collections import Counter

import otf2
from otf2.enums import GroupType


def comm_location(comm, rank, own):
    if comm.group.group_type == GroupType.COMM_SELF:
        return own
    return comm.group.members[rank]


def main(anchor):
    out = {"comms": {}, "unmatched": [], "open_requests": [], "collectives": {}, "balanced": True, "messages": 0}
    sends, recvs = Counter(), Counter()
    with otf2.reader.open(anchor) as trace:
        for c in trace.definitions.comms:
            out["comms"][str(c._ref)] = {
                "name": c.name,
                "group": str(c.group.group_type).split(".")[-1],
                "members": [m._ref for m in c.group.members] if c.group.group_type == GroupType.COMM_GROUP else [],
                "parent": c.parent._ref if c.parent is not None else None,
            }
        pending = {}  # (location, request) -> kind
        depth = {}
        for loc, ev in trace.events:
            me = loc._ref
            kind = type(ev).__name__
            if kind in ("MpiSend", "MpiIsend"):
                to = comm_location(ev.communicator, ev.receiver, loc)._ref
                sends["%d>%d %d %d %d" % (me, to, ev.communicator._ref, ev.msg_tag, ev.msg_length)] += 1
            elif kind in ("MpiRecv", "MpiIrecv"):
                frm = comm_location(ev.communicator, ev.sender, loc)._ref
                recvs["%d>%d %d %d %d" % (frm, me, ev.communicator._ref, ev.msg_tag, ev.msg_length)] += 1
            if kind in ("MpiIsend", "MpiIrecvRequest", "NonBlockingCollectiveRequest"):
                key = (me, ev.request_id)
                if key in pending:
                    out["open_requests"].append("%d %s %d started twice" % (me, kind, ev.request_id))
                pending[key] = kind
            elif kind in ("MpiIsendComplete", "MpiIrecv", "NonBlockingCollectiveComplete", "MpiRequestCancelled"):
                started = pending.pop((me, ev.request_id), None)
                want = {"MpiIsendComplete": ("MpiIsend",), "MpiIrecv": ("MpiIrecvRequest",),
                        "NonBlockingCollectiveComplete": ("NonBlockingCollectiveRequest",),
                        "MpiRequestCancelled": ("MpiIsend", "MpiIrecvRequest")}[kind]
                if started not in want:
                    out["open_requests"].append("%d %s %d completes %s" % (me, kind, ev.request_id, started))
            if kind == "MpiCollectiveBegin":
                depth[me] = depth.get(me, 0) + 1
                out["collectives"].setdefault(str(me), []).append("begin")
            elif kind in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                if kind == "MpiCollectiveEnd":
                    depth[me] = depth.get(me, 0) - 1
                    if depth[me] < 0:
                        out["balanced"] = False
                root = "NONE"
                if ev.root != 0xFFFFFFFF:
                    root = str(comm_location(ev.communicator, ev.root, loc)._ref)
                out["collectives"].setdefault(str(me), []).append("%s %s %d %s %d %d" % (
                    "end" if kind == "MpiCollectiveEnd" else "complete",
                    str(ev.collective_op).split(".")[-1], ev.communicator._ref, root, ev.size_sent, ev.size_received))
        for (me, req), kind in sorted(pending.items()):
            out["open_requests"].append("%d %s %d never completes" % (me, kind, req))
        if any(d != 0 for d in depth.values()):
            out["balanced"] = False
    for k in sorted(set(sends) | set(recvs)):
        if sends[k] != recvs[k]:
            out["unmatched"].append("%s: %d sends, %d receives" % (k, sends[k], recvs[k]))
    out["messages"] = sum(min(sends[k], recvs[k]) for k in sends)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
