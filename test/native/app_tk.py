#!/usr/bin/python3
# A small Tk app for the native route's tests: a toolkit with no accessibility tree (Tk has no AT-SPI
# bridge) and no _NET_WM_PID on its window. An entry and a button; it reports its own state as one JSON line
# on stdout on every change (the entry's text, the click count, which widget has focus), so tests assert
# what the app itself holds.
#   app_tk.py TITLE
import sys
import tkinter as tk

from truth import click_counter, reporter  # noqa: E402 (beside this script)

title = sys.argv[1] if len(sys.argv) > 1 else 'Verity Tk app'
root = tk.Tk()
root.title(title)
root.geometry('420x160+40+40')
text = tk.StringVar(root)
entry = tk.Entry(root, textvariable=text, width=40)
entry.pack(padx=8, pady=8)
clicks = {'n': 0}


def state():
    focus = root.focus_get()
    return {
        'entry': text.get(),
        'clicks': clicks['n'],
        'focus': focus.winfo_class() if focus else None,
    }


changed = reporter(state)
on_click = click_counter(clicks, changed)
button = tk.Button(root, text='Press me', command=on_click)
button.pack(pady=8)
text.trace_add('write', changed)
root.bind_all('<FocusIn>', changed)
root.bind_all('<FocusOut>', changed)
root.after_idle(changed)
root.mainloop()
