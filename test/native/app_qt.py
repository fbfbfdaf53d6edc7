#!/usr/bin/python3
# A small Qt 5 app for the native route's tests (the Qt counterpart of app.py): a line edit, a multi-line
# text edit, a check box, a button, a combo box and a slider each with a label beside it (its buddy), and a
# spin box. It reports its own state as one JSON line on stdout on every change, so tests assert what the app
# itself holds, not what Verity says.
# Run with QT_ACCESSIBILITY=1 QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 (desktop.ts's startApp does).
#   app_qt.py TITLE [--entry-with-nul] [--menus]
# --menus: a menu bar (invoke_menu): Format > Bold (a check item), Strike (disabled), Size > Large, Count (a
# plain item with no visible effect); Help > About (opens a dialog); a context menu on the button (Pinned, a
# check item, one QMenu shown each time) and one on the check box (Mark: Qt's ActionsContextMenu).
# --entry-with-nul: the line edit starts holding "Ada\0x" (a NUL inside, as Qt's own padding leaves one;
# D-Bus strings cannot carry it, so AT-SPI reads of the text stop there).
import sys

from truth import click_counter, reporter  # noqa: E402 (beside this script)

from PyQt5.QtWidgets import (QAction, QApplication, QCheckBox, QComboBox, QDialog, QLabel, QLineEdit, QMenu, QMenuBar,
                             QPushButton, QSlider, QSpinBox, QTextEdit, QVBoxLayout, QWidget)
from PyQt5.QtCore import Qt

title = sys.argv[1] if len(sys.argv) > 1 else 'Verity Qt app'
app = QApplication(sys.argv[:1])
win = QWidget()
win.setWindowTitle(title)
win.resize(520, 420)
box = QVBoxLayout(win)


def named(widget, name):
    widget.setAccessibleName(name)
    box.addWidget(widget)
    return widget


def labelled(text, widget):
    # A label beside the widget, as a form has: Qt sends its buddy as the widget's LabelledBy relation (on
    # Linux Qt never sends a combo box's accessible name: its Name is its current text).
    label = QLabel(text)
    label.setBuddy(widget)
    box.addWidget(label)


entry = named(QLineEdit(), 'Name')
if '--entry-with-nul' in sys.argv[2:]:
    entry.setText('Ada\x00x')
notes = named(QTextEdit(), 'Notes')
notes.setAcceptRichText(False)
check = named(QCheckBox('Subscribe'), 'Subscribe')
button = named(QPushButton('Press me'), 'Press me')
combo = QComboBox()
labelled('Colour', combo)
named(combo, 'Colour')
combo.addItems(['Red', 'Green', 'Blue'])
count = named(QSpinBox(), 'Count')
count.setRange(0, 1000)
count.setValue(3)
volume = QSlider(Qt.Horizontal)
labelled('Volume', volume)
named(volume, 'Volume')
volume.setRange(0, 100)
volume.setValue(10)
clicks = {'n': 0}


menus = {'bold': False, 'size': None, 'menu_count': 0, 'dialog_open': False, 'pinned': False, 'marked': 0}


def set_menu(key, value):
    menus[key] = value
    changed()


if '--menus' in sys.argv[2:]:
    bar = QMenuBar()
    box.setMenuBar(bar)
    fmt = bar.addMenu('Format')
    bold = fmt.addAction('Bold')
    bold.setCheckable(True)
    bold.toggled.connect(lambda on: set_menu('bold', on))
    fmt.addAction('Strike').setEnabled(False)
    fmt.addMenu('Size').addAction('Large').triggered.connect(lambda: set_menu('size', 'large'))
    fmt.addAction('Count').triggered.connect(lambda: set_menu('menu_count', menus['menu_count'] + 1))
    about = QDialog(win)
    about.setWindowTitle('About ' + title)
    about.finished.connect(lambda *_: set_menu('dialog_open', False))

    def on_about():
        about.show()
        set_menu('dialog_open', True)
    bar.addMenu('Help').addAction('About').triggered.connect(on_about)
    # The button's context menu is one QMenu, shown again each time (customContextMenuRequested).
    context = QMenu(button)
    pinned = context.addAction('Pinned')
    pinned.setCheckable(True)
    pinned.toggled.connect(lambda on: set_menu('pinned', on))
    button.setContextMenuPolicy(Qt.CustomContextMenu)
    button.customContextMenuRequested.connect(lambda pos: context.popup(button.mapToGlobal(pos)))
    # The check box's is Qt's ActionsContextMenu: a new QMenu of its actions each time it opens, whose items
    # Qt 5 gives an accessible object only the first time (the item of a QAction stays that of the first
    # menu, gone with it).
    mark = QAction('Mark', check)
    mark.triggered.connect(lambda: set_menu('marked', menus['marked'] + 1))
    check.addAction(mark)
    check.setContextMenuPolicy(Qt.ActionsContextMenu)


def state():
    focus = app.focusWidget()
    return {
        **(menus if '--menus' in sys.argv[2:] else {}),
        'entry': entry.text(),
        'notes': notes.toPlainText(),
        'checked': check.isChecked(),
        'clicks': clicks['n'],
        'combo': combo.currentText(),
        'count': count.value(),
        'volume': volume.value(),
        'focus': focus.accessibleName() if focus else None,
        'active': win.isActiveWindow(),
    }


changed = reporter(state)
on_click = click_counter(clicks, changed)


button.clicked.connect(on_click)
entry.textChanged.connect(changed)
notes.textChanged.connect(changed)
check.toggled.connect(changed)
combo.currentIndexChanged.connect(changed)
count.valueChanged.connect(changed)
volume.valueChanged.connect(changed)
app.focusChanged.connect(changed)
win.show()
changed()
sys.exit(app.exec_())
