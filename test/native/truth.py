# What every test app (GTK 3, GTK 4, Qt) reports as the truth: its widgets' own state, one JSON line on
# stdout whenever it changes, and its button's click count.
import json


def reporter(state):
    """Returns changed(*_): prints state() as JSON when it differs from the last line printed."""
    last = {'s': None}

    def changed(*_):
        s = json.dumps(state())
        if s != last['s']:
            last['s'] = s
            print(s, flush=True)
        return False  # as a GLib idle callback: run once
    return changed


def click_counter(clicks, changed):
    """Returns on_click(*_): counts a click in clicks['n'] and reports the change."""
    def on_click(*_):
        clicks['n'] += 1
        changed()
    return on_click
