#!/usr/bin/python3
# A small Tk app for the native route's tests: a toolkit with no accessibility tree (Tk has no AT-SPI
# bridge) and no _NET_WM_PID on its window. An entry, a button and a red swatch; it reports its own state
# as one JSON line on stdout on every change (the entry's text, the click count, which widget has focus,
# where the button and the swatch are drawn in the window), so tests assert what the app itself holds.
#   app_tk.py TITLE
#   app_tk.py TITLE --net-wm-pid   also sets _NET_WM_PID on its window to its own pid (as Tk does not; as
#                                  an app in a pid namespace would, its pid there), and reports it
import ctypes
import os
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
# A block of one known colour: a screenshot must show it where the app says it is.
swatch = tk.Frame(root, width=60, height=20, background='#e01b24')
net_wm_pid = {'pid': None}


def state():
    focus = root.focus_get()
    mapped = swatch.winfo_ismapped()
    return {
        'entry': text.get(),
        'clicks': clicks['n'],
        'focus': focus.winfo_class() if focus else None,
        # In the window's own pixels (the client area a screenshot of it shows), once drawn.
        'swatch': [swatch.winfo_x(), swatch.winfo_y(), swatch.winfo_width(), swatch.winfo_height()]
        if mapped else None,
        'button': [button.winfo_x(), button.winfo_y(), button.winfo_width(), button.winfo_height()]
        if button.winfo_ismapped() else None,
        'net_wm_pid': net_wm_pid['pid'],
    }


def set_net_wm_pid():
    """_NET_WM_PID on the window the window manager manages (Tk's wrapper, the parent of '.'), via Xlib."""
    x = ctypes.CDLL('libX11.so.6')
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XQueryTree.argtypes = [ctypes.c_void_p, ctypes.c_ulong] + [ctypes.c_void_p] * 4
    x.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    x.XFree.argtypes = [ctypes.c_void_p]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x.XOpenDisplay(None)
    if not dpy:
        raise SystemExit('app_tk.py: cannot open the display to set _NET_WM_PID')
    top, parent, children, count = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_void_p(), ctypes.c_uint()
    x.XQueryTree(dpy, root.winfo_id(), ctypes.byref(top), ctypes.byref(parent), ctypes.byref(children),
                 ctypes.byref(count))
    if children:
        x.XFree(children)
    pid = (ctypes.c_long * 1)(os.getpid())  # format 32 is an array of longs in Xlib
    x.XChangeProperty(dpy, parent.value, x.XInternAtom(dpy, b'_NET_WM_PID', 0), 6, 32, 0, pid, 1)  # CARDINAL
    x.XCloseDisplay(dpy)  # flushes the request
    net_wm_pid['pid'] = os.getpid()


changed = reporter(state)
on_click = click_counter(clicks, changed)
button = tk.Button(root, text='Press me', command=on_click)
button.pack(pady=8)
swatch.pack(pady=4)
text.trace_add('write', changed)
root.bind_all('<FocusIn>', changed)
root.bind_all('<FocusOut>', changed)
swatch.bind('<Configure>', changed)
swatch.bind('<Map>', changed)
button.bind('<Configure>', changed)
if '--net-wm-pid' in sys.argv:
    root.update()  # Tk's wrapper window exists once the window is mapped
    set_net_wm_pid()
root.after_idle(changed)
root.mainloop()
