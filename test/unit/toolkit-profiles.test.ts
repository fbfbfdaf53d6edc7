// The toolkit profiles (server/native/linux/toolkits/): which profile an app gets from the toolkit it
// names, and the conventions each holds (the AT-SPI model's hooks), as the model's flags said them before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { profileFor } from '../../server/native/linux/toolkits/index.js';

const named = (name: string, version: string, app = 'an app') => profileFor({ name, version, app }).name;

test('an app gets the profile of the toolkit it names, ATK conventions when it names none known', () => {
  assert.equal(profileFor(null).name, 'atk', 'an app not asked yet');
  assert.equal(named('Qt', '5.15.8'), 'qt');
  assert.equal(named('QtWayland', '6.4'), 'qt');
  assert.equal(named('GTK', '4.8.3'), 'gtk4');
  assert.equal(named('gtk', '3.24.38'), 'gtk3');
  assert.equal(named('gail', '3.0'), 'gtk3');
  assert.equal(named('gail', '4.0'), 'atk', "gail is GTK 3's accessibility module: no GTK 4 quirks");
  assert.equal(named('GTK', '2.24'), 'atk');
  assert.equal(named('VCL', '7.4.7.2'), 'libreoffice');
  assert.equal(named('gtk', '3.24.38', 'soffice'), 'libreoffice', 'LibreOffice with its gtk3 plugin');
  assert.equal(profileFor({ name: 'gtk', version: '3.24.38', app: 'soffice' }).wholeText, true, "over GTK 3's");
  assert.equal(named('Gecko', '115.0'), 'firefox');
  assert.equal(named('', ''), 'atk');
});

test("each profile's conventions: offsets' unit, InsertText's length, extents, whole-text reads, `editable`", () => {
  const qt = profileFor({ name: 'Qt', version: '5', app: 'app_qt.py' });
  const gtk3 = profileFor({ name: 'GTK', version: '3.24', app: 'app.py' });
  const gtk4 = profileFor({ name: 'GTK', version: '4.8', app: 'app_gtk4.py' });
  const atk = profileFor(null);
  assert.deepEqual(
    [qt, gtk3, gtk4, atk].map((p) => [p.countsUtf16, p.windowRelative, p.wholeText, p.popoversApart]),
    [
      [true, false, false, false],
      [false, false, true, false],
      [false, true, false, true],
      [false, false, false, false],
    ],
  );
  assert.equal(qt.insertLength('a😀é'), 4, 'Qt: UTF-16 units');
  assert.equal(gtk3.insertLength('a😀é'), 7, 'ATK: UTF-8 bytes');
  assert.ok(qt.combo && gtk4.combo && !gtk3.combo && !atk.combo, 'combo boxes without Selection: Qt and GTK 4');
  assert.ok(qt.comboValue && gtk4.comboValue && !gtk3.comboValue, "a combo box's value: Qt and GTK 4");
  const lo = profileFor({ name: 'gtk', version: '3.24', app: 'soffice' });
  assert.ok(lo.typeRoute && lo.refusesInsert && !gtk3.typeRoute && !gtk3.refusesInsert, "Calc's cells: LibreOffice");
});
