// The one AT-SPI event Verity listens for: an object an app shows (object:state-changed:showing), heard only
// while invoke_menu waits for a Qt context menu, which no accessible lists. Registered with the registry and
// the bus for that wait only, and removed after: every other wait reads states (model.ts).
import type { DBusConnection } from '../transport/dbus.js';
import { IFACE, type AccRef } from './shapes.js';

const ROOT_PATH = '/org/a11y/atspi/accessible/root';

/** What a watch heard so far, and how to end it. */
export interface ShownWatch {
  shown: AccRef[];
  stop(): Promise<void>;
}

/** Atspi.call, as the watch uses it. */
export type AtspiCall = (
  ref: AccRef,
  iface: string,
  member: string,
  signature?: string,
  args?: unknown[],
) => Promise<unknown>;

/**
 * Starts hearing which objects `app` (its unique bus name) shows: object:state-changed:showing with 1, as
 * the refs it names. For a popup no accessible lists (Qt leaves its Qt::Popup windows, a context menu, out
 * of its application's children and of their widget's): the event is the only place its path is told.
 * Toolkits send only the events someone registered for, so this registers it with the registry and a match
 * rule with the bus, then makes one call to the app: the registry's EventListenerRegistered reached the app
 * before that call, and the app reads the registry's new list as it gets the signal, so once the call is
 * answered the app sends the event. `stop` removes both; the listener is gone with it.
 */
export async function watchShown(bus: DBusConnection, call: AtspiCall, app: string): Promise<ShownWatch> {
  const shown: AccRef[] = [];
  const EVENT = 'object:state-changed:showing';
  const rule = `type='signal',sender='${app}',interface='org.a11y.atspi.Event.Object',member='StateChanged',arg0='showing'`;
  const off = bus.onSignal((m) => {
    if (
      m.sender === app &&
      m.interface === 'org.a11y.atspi.Event.Object' &&
      m.member === 'StateChanged' &&
      m.body[0] === 'showing' &&
      Number(m.body[1]) === 1 &&
      m.path
    )
      shown.push({ bus: app, path: m.path });
  });
  const onBus = (member: string) =>
    bus.call({
      destination: 'org.freedesktop.DBus',
      path: '/org/freedesktop/DBus',
      interface: 'org.freedesktop.DBus',
      member,
      signature: 's',
      body: [rule],
    });
  const registry = { bus: 'org.a11y.atspi.Registry', path: '/org/a11y/atspi/registry' };
  const REGISTRY = 'org.a11y.atspi.Registry';
  try {
    await onBus('AddMatch');
    await call(registry, REGISTRY, 'RegisterEvent', 'sass', [EVENT, [], '']).catch(() =>
      call(registry, REGISTRY, 'RegisterEvent', 's', [EVENT]),
    );
    await call({ bus: app, path: ROOT_PATH }, IFACE.accessible, 'GetRole').catch(() => undefined);
  } catch (e) {
    off();
    await onBus('RemoveMatch').catch(() => undefined);
    throw e;
  }
  return {
    shown,
    stop: async () => {
      off();
      await Promise.all([
        onBus('RemoveMatch').catch(() => undefined),
        call(registry, REGISTRY, 'DeregisterEvent', 's', [EVENT]).catch(() => undefined),
      ]);
    },
  };
}
