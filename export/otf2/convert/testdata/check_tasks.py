"""Reads an OTF2 archive with python3-otf2 as a task-aware tool would and
prints, as JSON, what it found of the OpenMP tasks: each task, named by
(thread team, creating thread, generation number), must be created once
and complete once; each task has its own region stack (Knüpfer et al.'s
Score-P model: ThreadTaskSwitch changes the stack a location's enters and
leaves go to), and every leave must close the innermost region of the
current task's stack, which must be empty when the task completes."""
import json
import sys

import otf2


def main(anchor):
    created, completed, switched = {}, {}, {}
    where_created, where_completed = {}, {}
    errors = []
    stacks = {}

    def err(msg):
        if len(errors) < 20:
            errors.append(msg)

    with otf2.reader.open(anchor) as trace:
        cur = {}  # location -> the key of the task it runs
        outer = {}  # location -> keys before each ThreadTeamBegin
        for loc, ev in trace.events:
            ref = loc._ref
            if ref not in cur:
                cur[ref] = ("initial", ref)
                outer[ref] = []
            kind = type(ev).__name__
            if kind == "ThreadTeamBegin":
                outer[ref].append(cur[ref])
                cur[ref] = ("implicit", ref, ev.thread_team._ref)
            elif kind == "ThreadTeamEnd":
                key = ("implicit", ref, ev.thread_team._ref)
                if stacks.get(key):
                    err("location %d: implicit task ends with %s open" % (ref, stacks[key]))
                stacks.pop(key, None)
                cur[ref] = outer[ref].pop() if outer[ref] else ("initial", ref)
            elif kind in ("ThreadTaskCreate", "ThreadTaskSwitch", "ThreadTaskComplete"):
                team = ev.thread_team._ref
                key = (team, ev.creating_thread, ev.generation_number)
                if kind == "ThreadTaskCreate":
                    created[key] = created.get(key, 0) + 1
                    where_created[key] = ref
                elif kind == "ThreadTaskSwitch":
                    if ev.generation_number == 0:
                        cur[ref] = ("implicit", ref, team)
                    else:
                        cur[ref] = key
                        switched[key] = switched.get(key, 0) + 1
                else:
                    completed[key] = completed.get(key, 0) + 1
                    where_completed[key] = ref
                    if stacks.get(key):
                        err("task %s completes with %s open" % (key, stacks[key]))
                    if cur[ref] != key:
                        err("location %d: task %s completes while %s runs" % (ref, key, cur[ref]))
            elif kind == "Enter":
                stacks.setdefault(cur[ref], []).append(ev.region.name)
            elif kind == "Leave":
                st = stacks.get(cur[ref])
                if not st or st[-1] != ev.region.name:
                    err("location %d: leave %s in task %s whose stack is %s" % (ref, ev.region.name, cur[ref], st))
                else:
                    st.pop()
    keys = set(created) | set(completed) | set(switched)
    bad = [str(k) for k in sorted(keys) if created.get(k) != 1 or completed.get(k) != 1 or not switched.get(k)]
    json.dump({
        "created": sum(created.values()),
        "completed": sum(completed.values()),
        "switches": sum(switched.values()),
        "bad_tasks": bad[:20],
        "nbad": len(bad),
        "elsewhere": sum(1 for k in where_completed if where_created.get(k) not in (None, where_completed[k])),
        "errors": errors,
    }, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
