#!/usr/bin/python3
# A small GTK3 app for the native route's tests: an entry, a multi-line text view, a checkbox, a button,
# a combo box, and a "terminal" (a widget that takes keystrokes and exposes AT-SPI Text but no
# EditableText). It reports its own state as one JSON line on stdout on every change, so tests assert
# what the app itself holds, not what Verity says.
#   app.py TITLE            the form
#   app.py TITLE --many N   the form plus N rows of labelled buttons (for the ~500-node benchmark)
#   app.py TITLE --reveal   the form plus a "Show more" button that shows a hidden field and button (changes)
#   app.py TITLE --password the form plus a password entry "Secret" (AT-SPI role "password text")
#   app.py TITLE --menus    the form under a menu bar (invoke_menu): Format > Bold (a check item), Strike
#                           (disabled), Size > Large, Count (a plain item with no visible effect); Help > About
#                           (opens a dialog); and a context menu on the button (Pinned, a check item)
import sys

from truth import click_counter, reporter  # noqa: E402 (beside this script)

import gi
gi.require_version('Gtk', '3.0')
gi.require_version('Atk', '1.0')
gi.require_version('Gdk', '3.0')
from gi.repository import Atk, Gdk, GLib, Gtk  # noqa: E402

title = sys.argv[1] if len(sys.argv) > 1 else 'Verity test app'
many = int(sys.argv[sys.argv.index('--many') + 1]) if '--many' in sys.argv else 0


class TermAccessible(Gtk.WidgetAccessible, Atk.Text):
    """Text without EditableText: what a terminal offers to AT-SPI."""

    def do_get_text(self, start, end):
        text = self.get_widget().text if self.get_widget() else ''
        return text[start:] if end < 0 else text[start:end]

    def do_get_character_count(self):
        return len(self.get_widget().text) if self.get_widget() else 0

    def do_get_caret_offset(self):
        return self.do_get_character_count()


class Term(Gtk.EventBox):
    def __init__(self):
        super().__init__()
        self.text = ''
        self.label = Gtk.Label(label='$ ')
        self.label.set_xalign(0)
        self.add(self.label)
        self.set_can_focus(True)
        self.set_size_request(300, 30)
        self.connect('key-press-event', self.on_key)
        self.connect('button-press-event', lambda *_: self.grab_focus())
        self._acc = None

    def do_get_accessible(self):
        if self._acc is None:
            self._acc = TermAccessible()
            self._acc.set_widget(self)
            self._acc.set_role(Atk.Role.TERMINAL)
            self._acc.set_name('Term')
        return self._acc

    def on_key(self, _widget, event):
        ch = None
        code = Gdk.keyval_to_unicode(event.keyval)
        if event.keyval == Gdk.KEY_Return:
            ch = '\n'
        elif event.keyval == Gdk.KEY_BackSpace:
            self.text = self.text[:-1]
            self.label.set_text('$ ' + self.text[-40:])
            changed()
            return True
        elif code:
            ch = chr(code)
        if ch:
            self.text += ch
            self.label.set_text('$ ' + self.text[-40:])
            changed()
            return True
        return False


win = Gtk.Window(title=title)
win.set_default_size(520, 420)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
box.set_border_width(8)
win.add(box)

entry = Gtk.Entry()
entry.get_accessible().set_name('Name')
box.pack_start(entry, False, False, 0)

scroll = Gtk.ScrolledWindow()
scroll.set_size_request(-1, 90)
view = Gtk.TextView()
view.get_accessible().set_name('Notes')
scroll.add(view)
box.pack_start(scroll, False, False, 0)

check = Gtk.CheckButton(label='Subscribe')
box.pack_start(check, False, False, 0)

clicks = {'n': 0}
button = Gtk.Button(label='Press me')
box.pack_start(button, False, False, 0)

combo = Gtk.ComboBoxText()
combo.get_accessible().set_name('Colour')
for colour in ['Red', 'Green', 'Blue']:
    combo.append_text(colour)
combo.set_active(0)
box.pack_start(combo, False, False, 0)

term = Term()
box.pack_start(term, False, False, 0)

volume = Gtk.Scale.new_with_range(Gtk.Orientation.HORIZONTAL, 0, 100, 1)
volume.set_draw_value(False)
volume.set_value(10)
volume.get_accessible().set_name('Volume')
box.pack_start(volume, False, False, 0)

# A block of one known colour: screenshots must show it where its frame says, in the right channels.
swatch = Gtk.Label(label='Swatch')
swatch.set_name('swatch')
swatch.get_accessible().set_name('Swatch')
css = Gtk.CssProvider()
css.load_from_data(b'#swatch { background-color: #e01b24; color: #e01b24; padding: 6px; }')
Gtk.StyleContext.add_provider_for_screen(Gdk.Screen.get_default(), css, Gtk.STYLE_PROVIDER_PRIORITY_APPLICATION)
box.pack_start(swatch, False, False, 0)

if many:
    rows = Gtk.ScrolledWindow()
    rows.set_size_request(-1, 120)
    grid = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    for i in range(many):
        row = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL)
        row.pack_start(Gtk.Label(label=f'Row {i}'), False, False, 0)
        row.pack_start(Gtk.Button(label=f'Open {i}'), False, False, 0)
        grid.pack_start(row, False, False, 0)
    rows.add(grid)
    box.pack_start(rows, True, True, 0)

# Hidden until "Show more" is clicked: what an action's `changes` says appeared.
more = None
if '--reveal' in sys.argv:
    reveal = Gtk.Button(label='Show more')
    box.pack_start(reveal, False, False, 0)
    more = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=6)
    extra = Gtk.Entry()
    extra.get_accessible().set_name('Extra')
    more.pack_start(extra, True, True, 0)
    more.pack_start(Gtk.Button(label='Extra button'), False, False, 0)
    more.set_no_show_all(True)
    box.pack_start(more, False, False, 0)

    def on_reveal(_widget):
        more.set_no_show_all(False)
        more.show_all()
        GLib.idle_add(changed)

    reveal.connect('clicked', on_reveal)
    extra.connect('changed', lambda *_: changed())

secret = None
if '--password' in sys.argv:
    secret = Gtk.Entry()
    secret.set_visibility(False)
    secret.get_accessible().set_name('Secret')
    box.pack_start(secret, False, False, 0)


menus = {'bold': False, 'size': None, 'menu_count': 0, 'dialog_open': False, 'pinned': False}
if '--menus' in sys.argv:
    def item(menu, label, on=None, kind=Gtk.MenuItem):
        it = kind(label=label)
        if on:
            it.connect('toggled' if kind is Gtk.CheckMenuItem else 'activate', on)
        menu.append(it)
        return it

    def submenu(parent, label):
        top = Gtk.MenuItem(label=label)
        sub = Gtk.Menu()
        top.set_submenu(sub)
        parent.append(top)
        return sub

    def set_menu(key, value):
        menus[key] = value
        changed()

    def on_about(*_):
        dialog = Gtk.Dialog(title='About ' + title, transient_for=win)
        dialog.add_button('Close', Gtk.ResponseType.CLOSE)

        def closed(*_):
            dialog.destroy()
            set_menu('dialog_open', False)
        dialog.connect('response', closed)
        dialog.show_all()
        set_menu('dialog_open', True)

    menubar = Gtk.MenuBar()
    fmt = submenu(menubar, 'Format')
    item(fmt, 'Bold', lambda it: set_menu('bold', it.get_active()), Gtk.CheckMenuItem)
    item(fmt, 'Strike').set_sensitive(False)
    item(submenu(fmt, 'Size'), 'Large', lambda *_: set_menu('size', 'large'))
    item(fmt, 'Count', lambda *_: set_menu('menu_count', menus['menu_count'] + 1))
    item(submenu(menubar, 'Help'), 'About', on_about)
    box.pack_start(menubar, False, False, 0)
    box.reorder_child(menubar, 0)
    context = Gtk.Menu()
    item(context, 'Pinned', lambda it: set_menu('pinned', it.get_active()), Gtk.CheckMenuItem)
    # Not attached to the button (gtk_menu_attach_to_widget): GTK 3 leaves an attached menu's window out of
    # the application's children and no widget lists it, so AT-SPI could not see it open.

    def on_context(_widget, event=None):
        if event is not None and event.button != 3:
            return False
        context.show_all()
        context.popup_at_pointer(event) if event is not None else context.popup_at_widget(
            button, Gdk.Gravity.SOUTH, Gdk.Gravity.NORTH_WEST, None)
        return True
    button.connect('button-press-event', on_context)
    button.connect('popup-menu', on_context)


def state():
    buf = view.get_buffer()
    return {
        **(menus if '--menus' in sys.argv else {}),
        'secret': secret.get_text() if secret else None,
        'entry': entry.get_text(),
        'notes': buf.get_text(buf.get_start_iter(), buf.get_end_iter(), True),
        'checked': check.get_active(),
        'clicks': clicks['n'],
        'combo': combo.get_active_text(),
        'term': term.text,
        'volume': volume.get_value(),
        'selection': list(entry.get_selection_bounds()),
        'focus': (win.get_focus().get_accessible().get_name() if win.get_focus() else None),
        'active': win.is_active(),
        'press_mods': press_mods['mods'],
        'notes_scroll': view.get_vadjustment().get_value(),
        'hovered': hovered['button'],
        **({'more_shown': more.get_visible(), 'extra': more.get_children()[0].get_text()} if more else {}),
    }


changed = reporter(state)
on_click = click_counter(clicks, changed)
# The modifiers held at the last press on the button (what a modifier click must deliver with it).
press_mods = {'mods': []}
MODS = (('shift', Gdk.ModifierType.SHIFT_MASK), ('ctrl', Gdk.ModifierType.CONTROL_MASK),
        ('alt', Gdk.ModifierType.MOD1_MASK))


def on_press(_widget, event):
    press_mods['mods'] = [name for name, mask in MODS if event.state & mask]
    GLib.idle_add(changed)
    return False


# Whether the pointer is over the button, as GTK tells the button (a hover's truth where no compositor says
# where the pointer is: sway).
hovered = {'button': False}


def on_crossing(entered):
    def handler(_widget, _event):
        hovered['button'] = entered
        GLib.idle_add(changed)
        return False
    return handler


button.connect('enter-notify-event', on_crossing(True))
button.connect('leave-notify-event', on_crossing(False))
button.connect('clicked', on_click)
button.connect('button-press-event', on_press)
view.get_vadjustment().connect('value-changed', changed)
entry.connect('changed', changed)
if secret:
    secret.connect('changed', changed)
view.get_buffer().connect('changed', changed)
check.connect('toggled', changed)
combo.connect('changed', changed)
volume.connect('value-changed', changed)
entry.connect('notify::selection-bound', changed)
entry.connect('notify::cursor-position', changed)
win.connect('set-focus', lambda *_: GLib.idle_add(changed))
win.connect('notify::is-active', changed)
win.connect('destroy', Gtk.main_quit)
win.show_all()
GLib.idle_add(changed)
Gtk.main()
