#!/usr/bin/python3
# The documents' own truth for the LibreOffice tests: connects to a running soffice over its UNO pipe
# (argv[1]: the pipe's name) and answers one JSON request per stdin line with one JSON line on stdout.
#   {"op": "new", "kind": "writer"|"calc"|"impress", "title": T, "text": S?}  a document titled T (its
#        window is "T - LibreOffice Writer"), pre-filled with S (Writer: its text; Calc: cell A1)
#   {"op": "text", "title": T}              the Writer document's text (doc.Text.String)
#   {"op": "cell", "title": T, "cell": "B2"} a Calc cell's content (.String of the first sheet's cell)
#   {"op": "shapes", "title": T}            the texts of the Impress document's first slide's shapes
#   {"op": "close", "title": T}             closes the document without saving
import json
import sys
import time

import uno
from com.sun.star.beans import PropertyValue
from com.sun.star.text.ControlCharacter import PARAGRAPH_BREAK


def connect(pipe):
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext('com.sun.star.bridge.UnoUrlResolver', local)
    deadline = time.time() + 60
    while True:
        try:
            ctx = resolver.resolve('uno:pipe,name=%s;urp;StarOffice.ComponentContext' % pipe)
            return ctx.ServiceManager.createInstanceWithContext('com.sun.star.frame.Desktop', ctx)
        except Exception:
            if time.time() > deadline:
                raise
            time.sleep(0.25)


desktop = connect(sys.argv[1])
docs = {}
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
    doc = docs[req['title']]
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
        out = handle(json.loads(line))
    except Exception as e:  # the test reads the error as its answer
        out = {'error': '%s: %s' % (type(e).__name__, e)}
    print(json.dumps(out), flush=True)
