// Finding and opening the AT-SPI bus (model.ts connects to it): its address, from AT_SPI_BUS_ADDRESS or
// the session bus's org.a11y.Bus, with accessibility turned on; and a bus opened with a refusal that names
// what is missing when nothing listens there.
import { Refusal } from '../../../contract/refusal.js';
import { machineEnv } from '../../../contract/machine-env.js';
import { DBusConnection, Variant } from '../transport/dbus.js';
import { busSocketExists, sessionBusAddress } from '../transport/env.js';

/**
 * The AT-SPI bus's address: AT_SPI_BUS_ADDRESS when set, else org.a11y.Bus.GetAddress on the session bus.
 * Turns accessibility on (org.a11y.Status.IsEnabled) on the way.
 */
export async function busAddress(): Promise<string> {
  let address = machineEnv().AT_SPI_BUS_ADDRESS;
  const sessionAddress = machineEnv().DBUS_SESSION_BUS_ADDRESS;
  if (!address || sessionAddress) {
    const session = await openBus(sessionBusAddress(), 'the session D-Bus');
    try {
      if (!address) {
        const reply = await session
          .call({
            destination: 'org.a11y.Bus',
            path: '/org/a11y/bus',
            interface: 'org.a11y.Bus',
            member: 'GetAddress',
          })
          .catch((e: Error) => {
            throw new Refusal(
              'unavailable',
              `the native route needs the AT-SPI bus: org.a11y.Bus.GetAddress failed on the session bus (${e.message.trim()}); install at-spi2-core or start at-spi-bus-launcher`,
            );
          });
        address = String(reply[0] ?? '');
        if (!address)
          throw new Refusal('unavailable', 'the native route needs the AT-SPI bus: org.a11y.Bus returned no address');
      }
      await session
        .call({
          destination: 'org.a11y.Bus',
          path: '/org/a11y/bus',
          interface: 'org.freedesktop.DBus.Properties',
          member: 'Set',
          signature: 'ssv',
          body: ['org.a11y.Status', 'IsEnabled', new Variant('b', true)],
        })
        .catch(() => undefined);
    } finally {
      session.close();
    }
  }
  return address;
}

export async function openBus(address: string, what: string): Promise<DBusConnection> {
  if (!busSocketExists(address))
    throw new Refusal('unavailable', `the native route needs ${what}: nothing listens at ${address}`);
  try {
    return await DBusConnection.open(address);
  } catch (e) {
    throw new Refusal(
      'unavailable',
      `the native route needs ${what}: could not connect to ${address} (${(e as Error).message})`,
    );
  }
}
