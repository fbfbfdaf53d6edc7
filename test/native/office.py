#!/usr/bin/python3
# The documents' own truth for the LibreOffice tests: connects to a running soffice over its UNO pipe
# (argv[1]: the pipe's name) and answers one JSON request per stdin line with one JSON line on stdout.
#   {"op": "new", "kind": "writer"|"calc"|"impress", "title": T, "text": S?}  a document titled T (its
#        window is "T - LibreOffice Writer"), pre-filled with S (Writer: its text; Calc: cell A1)
#   {"op": "text", "title": T}              the Writer document's text (doc.Text.String)
#   {"op": "cell", "title": T, "cell": "B2"} a Calc cell's content (.String of the first sheet's cell)
#   {"op": "shapes", "title": T}            the texts of the Impress document's first slide's shapes
#   {"op": "close", "title": T}             closes the document without saving
#   {"op": "adopt", "title": T}             answers for a document LibreOffice opened itself, titled T
#   {"op": "frame", "title": T}             its window's size and whether its frame is active
import json
import sys
import threading
import time

import uno
import unohelper
from com.sun.star.awt import XCallback
from com.sun.star.beans import PropertyValue
from com.sun.star.text.ControlCharacter import PARAGRAPH_BREAK

# How long a request may wait for LibreOffice's main thread (libreoffice.ts gives up sooner: 60 s for a new
# document, 120 s for the rest, and starts LibreOffice again).
MAIN_THREAD_S = 180


def connect(pipe):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.time() + 60
    while True:
        try:
            ctx = resolver.resolve('uno:pipe,name=%s;urp;StarOffice.ComponentContext' % pipe)
            smgr = ctx.ServiceManager
            return (
                smgr.createInstanceWithContext('com.sun.star.frame.Desktop', ctx),
                smgr.createInstanceWithContext('com.sun.star.awt.AsyncCallback', ctx),
            )
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.25)


desktop, main_thread = connect(sys.argv[1])
docs = {}


class Request(unohelper.Base, XCallback):
    """One request, run by LibreOffice's main thread (AsyncCallback.notify is called from its event loop)."""

    def __init__(self, req):
        self.req = req
        self.out = None
        self.done = threading.Event()

    def notify(self, data):
        try:
            self.out = handle(self.req)
        except Exception as e:  # the test reads the error as its answer
            self.out = {'error': '%s: %s' % (type(e).__name__, e)}
        finally:
            self.done.set()


def on_main_thread(req):
    """
    Runs a request on LibreOffice's main thread, as its own menus and dialogs do. A UNO call arriving over
    the pipe runs on a bridge thread instead, and a new document made there hung now and then (gdb, with an
    AT-SPI client walking the tree meanwhile): setting up the menu bar, that thread asks GTK whether Paste
    is possible, gtk_clipboard_wait_for_targets runs its nested main loop on that thread, answering AT-SPI
    calls, and never sees its answer, while the main thread waits for the main context. AsyncCallback calls
    notify() from the main loop; the calls notify() makes back into LibreOffice carry that thread's identity
    over the bridge (UNO's thread identity), so LibreOffice runs them on its main thread.
    """
    request = Request(req)
    main_thread.addCallback(request, None)
    if not request.done.wait(MAIN_THREAD_S):
        return {'error': 'LibreOffice main thread did not run %s within %d s' % (req.get('op'), MAIN_THREAD_S)}
    return request.out

FACTORY = {'writer': 'private:factory/swriter', 'calc': 'private:factory/scalc', 'impress': 'private:factory/simpress'}


def handle(req):
    op = req['op']
    if op == 'new':
        hidden = PropertyValue()
        hidden.Name = 'Hidden'
        hidden.Value = False
        doc = desktop.loadComponentFromURL(FACTORY[req['kind']], '_blank', 0, (hidden,))
        doc.setTitle(req['title'])
        text = req.get('text')
        if text is not None and req['kind'] == 'writer':
            # One paragraph per line (XText.String would make "\n" a line break inside one paragraph).
            lines = text.split('\n')
            doc.Text.String = lines[0]
            for line in lines[1:]:
                end = doc.Text.createTextCursor()
                end.gotoEnd(False)
                doc.Text.insertControlCharacter(end, PARAGRAPH_BREAK, False)
                doc.Text.insertString(end, line, False)
        if text is not None and req['kind'] == 'calc':
            doc.Sheets.getByIndex(0).getCellRangeByName('A1').String = text
        docs[req['title']] = doc
        return {'ok': True}
    if op == 'adopt':
        # A document LibreOffice opened itself (started by launch_app: "Untitled 1"), by its title.
        components = desktop.Components.createEnumeration()
        while components.hasMoreElements():
            doc = components.nextElement()
            if doc.Title == req['title']:
                docs[req['title']] = doc
                return {'ok': True}
        return {'error': 'no document titled %s' % req['title']}
    doc = docs[req['title']]
    if op == 'frame':
        # The document's window as LibreOffice itself has it: its size and whether its frame is active.
        frame = doc.CurrentController.Frame
        size = frame.ContainerWindow.getPosSize()
        return {'width': size.Width, 'height': size.Height, 'active': frame.isActive()}
    if op == 'text':
        return {'text': doc.Text.String}
    if op == 'cell':
        return {'text': doc.Sheets.getByIndex(0).getCellRangeByName(req['cell']).String}
    if op == 'shapes':
        page = doc.DrawPages.getByIndex(0)
        return {'texts': [page.getByIndex(i).String for i in range(page.Count)]}
    if op == 'close':
        doc.close(True)
        del docs[req['title']]
        return {'ok': True}
    return {'error': 'unknown op %s' % op}


print(json.dumps({'ready': True}), flush=True)
for line in sys.stdin:
    try:
        out = on_main_thread(json.loads(line))
    except Exception as e:  # the test reads the error as its answer
        out = {'error': '%s: %s' % (type(e).__name__, e)}
    print(json.dumps(out), flush=True)
