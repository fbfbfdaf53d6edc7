#!/usr/bin/python3
# The "bare libatspi" peer of the office bench: for each stdin line (a window title), walks that window's
# accessible tree with libatspi (python3-gi, gir1.2-atspi-2.0) as a screen reader does: from the frame
# down by GetChildAtIndex, into shown nodes only, reading each node's role, name, states and extents; a
# table that manages its own cells (a sheet) by the rows and columns in view (Table.GetAccessibleAt), as
# Verity reads it.
# Answers one JSON line: {"nodes": N} (or {"error": ...}).
import json
import sys

import gi

gi.require_version('Atspi', '2.0')
from gi.repository import Atspi  # noqa: E402

SHOWING = Atspi.StateType.SHOWING
MAX_CHILDREN = 2000


def frame_named(title):
    desktop = Atspi.get_desktop(0)
    for i in range(desktop.get_child_count()):
        app = desktop.get_child_at_index(i)
        if app is None:
            continue
        for j in range(app.get_child_count()):
            top = app.get_child_at_index(j)
            if top is not None and top.get_name() == title:
                return top
    return None


def walk(node, depth):
    node.get_role()
    node.get_name()
    states = node.get_state_set()
    node.get_extents(Atspi.CoordType.SCREEN)
    count = 1
    if depth > 0 and not states.contains(SHOWING):
        return count
    if states.contains(Atspi.StateType.MANAGES_DESCENDANTS) and node.get_table_iface() is not None:
        children = cells_in_view(node)
    else:
        children = (node.get_child_at_index(i) for i in range(min(node.get_child_count(), MAX_CHILDREN)))
    for child in children:
        if child is not None:
            count += walk(child, depth + 1)
    return count


def cells_in_view(table):
    box = table.get_extents(Atspi.CoordType.SCREEN)
    first = table.get_accessible_at_point(box.x + 1, box.y + 1, Atspi.CoordType.SCREEN)
    last = table.get_accessible_at_point(box.x + box.width - 2, box.y + box.height - 2, Atspi.CoordType.SCREEN)
    if first is None or last is None:
        return []
    a, b = first.get_index_in_parent(), last.get_index_in_parent()
    r0, c0 = Atspi.Table.get_row_at_index(table, a), Atspi.Table.get_column_at_index(table, a)
    r1, c1 = Atspi.Table.get_row_at_index(table, b), Atspi.Table.get_column_at_index(table, b)
    return [Atspi.Table.get_accessible_at(table, r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)][:MAX_CHILDREN]


for line in sys.stdin:
    try:
        frame = frame_named(line.rstrip('\n'))
        out = {'nodes': walk(frame, 0)} if frame else {'error': 'no window named %r' % line.strip()}
    except Exception as e:
        out = {'error': '%s: %s' % (type(e).__name__, e)}
    print(json.dumps(out), flush=True)
