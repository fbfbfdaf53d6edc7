#!/usr/bin/python3
# A small GTK 4 app for the native route's tests (the GTK 4 counterpart of app.py): an entry, a
# multi-line text view, a check box, a button, a combo box, a spin button and a slider. It reports its own
# state as one JSON line on stdout on every change, so tests assert what the app itself holds.
#   app_gtk4.py TITLE
import sys

from truth import click_counter, reporter  # noqa: E402 (beside this script)

import gi
gi.require_version('Gtk', '4.0')
from gi.repository import GLib, Gtk  # noqa: E402

title = sys.argv[1] if len(sys.argv) > 1 else 'Verity GTK 4 app'
win = Gtk.Window(title=title)
win.set_default_size(520, 420)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
for side in ('top', 'bottom', 'start', 'end'):
    getattr(box, f'set_margin_{side}')(8)
win.set_child(box)


def named(widget, name):
    widget.update_property([Gtk.AccessibleProperty.LABEL], [name])
    box.append(widget)
    return widget


entry = named(Gtk.Entry(), 'Name')
scroll = Gtk.ScrolledWindow()
scroll.set_size_request(-1, 90)
view = Gtk.TextView()
view.update_property([Gtk.AccessibleProperty.LABEL], ['Notes'])
scroll.set_child(view)
box.append(scroll)
check = named(Gtk.CheckButton(label='Subscribe'), 'Subscribe')
button = named(Gtk.Button(label='Press me'), 'Press me')
# GtkDropDown: GTK 4's combo box (GtkComboBox is deprecated from 4.10).
combo = named(Gtk.DropDown.new_from_strings(['Red', 'Green', 'Blue']), 'Colour')
count = named(Gtk.SpinButton.new_with_range(0, 100, 1), 'Count')
count.set_value(3)
volume = named(Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1), 'Volume')
volume.set_value(10)
clicks = {'n': 0}


def state():
    buf = view.get_buffer()
    focus = win.get_focus()
    return {
        'entry': entry.get_text(),
        'notes': buf.get_text(buf.get_start_iter(), buf.get_end_iter(), True),
        'checked': check.get_active(),
        'clicks': clicks['n'],
        'combo': combo.get_selected_item().get_string() if combo.get_selected_item() else None,
        'count': count.get_value_as_int(),
        'volume': volume.get_value(),
        'focus': type(focus).__name__ if focus else None,
        'active': win.is_active(),
    }


changed = reporter(state)
on_click = click_counter(clicks, changed)


button.connect('clicked', on_click)
entry.connect('changed', changed)
view.get_buffer().connect('changed', changed)
check.connect('toggled', changed)
combo.connect('notify::selected', changed)
count.connect('value-changed', changed)
volume.connect('value-changed', changed)
win.connect('notify::focus-widget', changed)
win.connect('notify::is-active', changed)
loop = GLib.MainLoop()
win.connect('close-request', lambda *_: loop.quit())
win.present()
GLib.idle_add(changed)
loop.run()
