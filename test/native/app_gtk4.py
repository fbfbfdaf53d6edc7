#!/usr/bin/python3
# A small GTK 4 app for the native route's tests (the GTK 4 counterpart of app.py): an entry, a
# multi-line text view, a check box, a button, a combo box, a spin button and a slider; and in a row below
# them the surfaces GTK 4 draws apart from its window: a menu button with a popover menu (an action item
# and a check item), a menu button with a plain popover holding a check box and a text entry ("Find"),
# and a button that opens a file chooser dialog. It reports its own state as one JSON line on stdout on every change, so tests
# assert what the app itself holds.
#   app_gtk4.py TITLE [--menus]
# --menus: a menu bar above the form (invoke_menu): Format > Bold (a check item), Strike (disabled), Size >
# Large, Count (a plain item with no visible effect); Help > About (opens a window); and a context menu on the
# button (Pinned, a check item).
import sys

from truth import click_counter, reporter  # noqa: E402 (beside this script)

import gi
gi.require_version('Gtk', '4.0')
from gi.repository import Gio, GLib, Gtk  # noqa: E402

title = sys.argv[1] if len(sys.argv) > 1 else 'Verity GTK 4 app'
win = Gtk.Window(title=title)
win.set_default_size(520, 480)
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

# The popover surfaces, in a row under the form.
row = Gtk.Box(orientation=Gtk.Orientation.HORIZONTAL, spacing=6)
box.append(row)
app_actions = Gio.SimpleActionGroup()
win.insert_action_group('app', app_actions)
menu_state = {'opened': 0}
open_action = Gio.SimpleAction.new('open', None)
app_actions.add_action(open_action)
bold_action = Gio.SimpleAction.new_stateful('bold', None, GLib.Variant.new_boolean(False))
app_actions.add_action(bold_action)
menu = Gio.Menu()
menu.append('Open recent', 'app.open')
menu.append('Bold', 'app.bold')
menu_button = Gtk.MenuButton(label='Actions')
menu_button.set_menu_model(menu)
menu_button.update_property([Gtk.AccessibleProperty.LABEL], ['Actions'])
row.append(menu_button)
pop_check = Gtk.CheckButton(label='Wrap lines')
pop_box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=4)
pop_box.append(pop_check)
# After the check box, so the popover still gives the check box the focus as it opens.
pop_entry = Gtk.Entry()
pop_entry.update_property([Gtk.AccessibleProperty.LABEL], ['Find'])
pop_box.append(pop_entry)
popover = Gtk.Popover()
popover.set_child(pop_box)
options_button = Gtk.MenuButton(label='Options')
options_button.set_popover(popover)
options_button.update_property([Gtk.AccessibleProperty.LABEL], ['Options'])
row.append(options_button)
file_button = Gtk.Button(label='Choose file')
row.append(file_button)
dialogs = {'chooser': None}


menus = {'size': None, 'menu_count': 0, 'about_open': False, 'pinned': False}
menu_bold = Gio.SimpleAction.new_stateful('menubold', None, GLib.Variant.new_boolean(False))
if '--menus' in sys.argv[2:]:
    def set_menu(key, value):
        menus[key] = value
        changed()

    def plain(name, on, enabled=True):
        action = Gio.SimpleAction.new(name, None)
        action.set_enabled(enabled)
        action.connect('activate', lambda *_: on())
        app_actions.add_action(action)

    def toggle(action, _):
        action.set_state(GLib.Variant.new_boolean(not action.get_state().get_boolean()))
        changed()
    menu_bold.connect('activate', toggle)
    app_actions.add_action(menu_bold)
    pinned = Gio.SimpleAction.new_stateful('pinned', None, GLib.Variant.new_boolean(False))
    pinned.connect('activate', lambda a, _: (toggle(a, _), set_menu('pinned', a.get_state().get_boolean())))
    app_actions.add_action(pinned)
    plain('strike', lambda: None, enabled=False)
    plain('large', lambda: set_menu('size', 'large'))
    plain('count', lambda: set_menu('menu_count', menus['menu_count'] + 1))
    about = Gtk.Window(title='About ' + title, transient_for=win)
    about.connect('close-request', lambda *_: (about.hide(), set_menu('about_open', False), True)[-1])
    # Escape closes it, as it closes GTK 3's and Qt's About dialogs (the tests close it so).
    escape = Gtk.ShortcutController()
    escape.add_shortcut(Gtk.Shortcut.new(Gtk.ShortcutTrigger.parse_string('Escape'), Gtk.NamedAction.new('window.close')))
    about.add_controller(escape)
    plain('about', lambda: (about.present(), set_menu('about_open', True)))
    fmt = Gio.Menu()
    fmt.append('Bold', 'app.menubold')
    fmt.append('Strike', 'app.strike')
    size = Gio.Menu()
    size.append('Large', 'app.large')
    fmt.append_submenu('Size', size)
    fmt.append('Count', 'app.count')
    helpm = Gio.Menu()
    helpm.append('About', 'app.about')
    model = Gio.Menu()
    model.append_submenu('Format', fmt)
    model.append_submenu('Help', helpm)
    bar = Gtk.PopoverMenuBar.new_from_model(model)
    box.prepend(bar)
    context_model = Gio.Menu()
    context_model.append('Pinned', 'app.pinned')
    context = Gtk.PopoverMenu.new_from_model(context_model)
    context.set_parent(button)
    context.set_has_arrow(False)
    right = Gtk.GestureClick(button=3)
    right.connect('pressed', lambda *_: context.popup())
    button.add_controller(right)


def state():
    buf = view.get_buffer()
    focus = win.get_focus()
    return {
        **({**menus, 'menu_bold': menu_bold.get_state().get_boolean()} if '--menus' in sys.argv[2:] else {}),
        'entry': entry.get_text(),
        'notes': buf.get_text(buf.get_start_iter(), buf.get_end_iter(), True),
        'checked': check.get_active(),
        'clicks': clicks['n'],
        'combo': combo.get_selected_item().get_string() if combo.get_selected_item() else None,
        'count': count.get_value_as_int(),
        'volume': volume.get_value(),
        'focus': type(focus).__name__ if focus else None,
        'opened': menu_state['opened'],
        'bold': bold_action.get_state().get_boolean(),
        'wrap': pop_check.get_active(),
        'find': pop_entry.get_text(),
        'menu_open': menu_button.get_popover().get_visible(),
        'popover_open': popover.get_visible(),
        'dialog_open': dialogs['chooser'] is not None,
        'active': win.is_active(),
    }


changed = reporter(state)
on_click = click_counter(clicks, changed)


def on_open(*_):
    menu_state['opened'] += 1
    changed()


def on_bold(action, _):
    action.set_state(GLib.Variant.new_boolean(not action.get_state().get_boolean()))
    changed()


def on_dialog_response(dialog, _response):
    dialog.destroy()
    dialogs['chooser'] = None
    changed()


def on_choose(*_):
    dialog = Gtk.FileChooserDialog(title='Choose a file', transient_for=win, action=Gtk.FileChooserAction.OPEN)
    dialog.add_button('Cancel', Gtk.ResponseType.CANCEL)
    dialog.add_button('Open', Gtk.ResponseType.ACCEPT)
    dialog.connect('response', on_dialog_response)
    dialogs['chooser'] = dialog
    dialog.present()
    changed()


open_action.connect('activate', on_open)
bold_action.connect('activate', on_bold)
file_button.connect('clicked', on_choose)
pop_check.connect('toggled', changed)
pop_entry.connect('changed', changed)
menu_button.get_popover().connect('notify::visible', changed)
popover.connect('notify::visible', changed)
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
