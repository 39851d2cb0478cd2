"""Reads an OTF2 archive with python3-otf2 and checks its one-sided
communication (RMA) records the way analysis tools pair them. Prints, as
JSON:
- wins: per window reference, its name and the locations of its
  communicator, in rank order;
- created, destroyed: per window reference, the locations that recorded
  its creation (destruction), in order of their references;
- ops: per location, the operations in order, as
  "kind win target bytes-sent bytes-received" (target as a location
  reference; a get's bytes as sent);
- no_local, no_remote: operations whose matching id has no local
  (RmaOpCompleteNonBlocking or Blocking) or no remote completion after it on
  the same location and window, as "location kind matching-id";
- unknown_completions: completions of matching ids no operation started;
- locks: per location, the lock records in order, as
  "request|release win target type" (target "all" for every process);
- syncs: per location, the group synchronisations and RMA syncs, as
  "group level win members..." and "sync win target type";
- balanced: every RmaCollectiveBegin has its RmaCollectiveEnd, in order;
- collectives: per location, "op level win" of each RmaCollectiveEnd."""
import json
import sys
from collections import defaultdict

import otf2

ALL = 0xFFFFFFFF


def target(win, remote):
    if remote == ALL:
        return "all"
    return str(win.comm.group.members[remote]._ref)


def main(anchor):
    out = {"wins": {}, "created": defaultdict(list), "destroyed": defaultdict(list), "ops": defaultdict(list),
           "no_local": [], "no_remote": [], "unknown_completions": [], "locks": defaultdict(list),
           "syncs": defaultdict(list), "balanced": True, "collectives": defaultdict(list)}
    with otf2.reader.open(anchor) as trace:
        for w in trace.definitions.rma_wins:
            out["wins"][str(w._ref)] = {"name": w.name, "members": [m._ref for m in w.comm.group.members]}
        # (location, window, matching id) -> [kind, local done, remote done]
        started = {}
        open_colls = defaultdict(int)
        for loc, ev in trace.events:
            me = loc._ref
            kind = type(ev).__name__
            if kind == "RmaWinCreate":
                out["created"][str(ev.win._ref)].append(me)
            elif kind == "RmaWinDestroy":
                out["destroyed"][str(ev.win._ref)].append(me)
            elif kind in ("RmaPut", "RmaGet", "RmaAtomic"):
                sent = ev.bytes if kind != "RmaAtomic" else ev.bytes_sent
                received = 0 if kind != "RmaAtomic" else ev.bytes_received
                name = kind if kind != "RmaAtomic" else "RmaAtomic:" + str(ev.type).split(".")[-1]
                out["ops"][str(me)].append("%s %d %s %d %d" % (name, ev.win._ref, target(ev.win, ev.remote), sent, received))
                key = (me, ev.win._ref, ev.matching_id)
                if key not in started:
                    started[key] = [kind, False, False]
            elif kind in ("RmaOpCompleteNonBlocking", "RmaOpCompleteBlocking", "RmaOpCompleteRemote"):
                key = (me, ev.win._ref, ev.matching_id)
                if key not in started:
                    out["unknown_completions"].append("%d %s %d" % (me, kind, ev.matching_id))
                    continue
                started[key][1 if kind != "RmaOpCompleteRemote" else 2] = True
                if started[key][1] and started[key][2]:
                    # A later operation may reuse the id (an epoch's
                    # operations to one target share it): it starts afresh.
                    del started[key]
            elif kind in ("RmaRequestLock", "RmaAcquireLock", "RmaTryLock"):
                out["locks"][str(me)].append("request %d %s %s" % (ev.win._ref, target(ev.win, ev.remote),
                                                                    str(ev.lock_type).split(".")[-1]))
            elif kind == "RmaReleaseLock":
                out["locks"][str(me)].append("release %d %s" % (ev.win._ref, target(ev.win, ev.remote)))
            elif kind == "RmaGroupSync":
                out["syncs"][str(me)].append("group %d %d %s" % (ev.sync_level.value, ev.win._ref,
                                                                 " ".join(str(m._ref) for m in ev.group.members)))
            elif kind == "RmaSync":
                out["syncs"][str(me)].append("sync %d %s %s" % (ev.win._ref, target(ev.win, ev.remote),
                                                                str(ev.sync_type).split(".")[-1]))
            elif kind == "RmaCollectiveBegin":
                open_colls[me] += 1
                if open_colls[me] > 1:
                    out["balanced"] = False
            elif kind == "RmaCollectiveEnd":
                open_colls[me] -= 1
                if open_colls[me] != 0:
                    out["balanced"] = False
                win = str(ev.win._ref) if ev.win is not None else "none"
                out["collectives"][str(me)].append("%s %d %s" % (str(ev.collective_op).split(".")[-1], ev.sync_level.value, win))
        for (me, win, mid), (kind, local, remote) in sorted(started.items()):
            if not local:
                out["no_local"].append("%d %s %d" % (me, kind, mid))
            if not remote:
                out["no_remote"].append("%d %s %d" % (me, kind, mid))
        if any(n != 0 for n in open_colls.values()):
            out["balanced"] = False
    json.dump(out, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
