#!/usr/bin/env python3
"""An independent D-Bus peer (GLib's GDBus) for the tests of Verity's own D-Bus client.

Connects to the bus at argv[1], owns org.verity.Echo and serves /org/verity/Echo:
  Echo(v) -> v          the value back, as GLib read it
  EchoBigEndian(v) -> v the same, in a big-endian message
  Sleep(u ms) -> ()     answers after ms milliseconds
  CallBack(s) -> s      calls Peer.Ping and an unknown method on the named connection, says what came back
Prints "ready" when it serves.
"""
import sys
import gi
gi.require_version('Gio', '2.0')
from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.verity.Echo">
    <method name="Echo"><arg type="v" direction="in"/><arg type="v" direction="out"/></method>
    <method name="EchoBigEndian"><arg type="v" direction="in"/><arg type="v" direction="out"/></method>
    <method name="Sleep"><arg type="u" direction="in"/></method>
    <method name="CallBack"><arg type="s" direction="in"/><arg type="s" direction="out"/></method>
  </interface>
</node>
"""

bus = Gio.DBusConnection.new_for_address_sync(
    sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def on_call(connection, sender, path, interface, method, params, invocation):
    if method == 'Echo':
        invocation.return_value(GLib.Variant('(v)', (params.get_child_value(0).get_variant(),)))
    elif method == 'EchoBigEndian':
        reply = Gio.DBusMessage.new_method_reply(invocation.get_message())
        reply.set_body(GLib.Variant('(v)', (params.get_child_value(0).get_variant(),)))
        reply.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
        connection.send_message(reply, Gio.DBusSendMessageFlags.NONE)
    elif method == 'Sleep':
        GLib.timeout_add(params.unpack()[0], lambda: (invocation.return_value(None), False)[1])
    elif method == 'CallBack':
        name = params.unpack()[0]
        said = []
        try:
            connection.call_sync(name, '/', 'org.freedesktop.DBus.Peer', 'Ping', None, None, Gio.DBusCallFlags.NONE, 2000, None)
            said.append('ping answered')
        except GLib.Error as e:
            said.append('ping failed: ' + e.message)
        try:
            connection.call_sync(name, '/', 'org.verity.Nothing', 'Here', None, None, Gio.DBusCallFlags.NONE, 2000, None)
            said.append('unknown method answered')
        except GLib.Error as e:
            said.append('unknown method refused: ' + (Gio.DBusError.get_remote_error(e) or e.message))
        invocation.return_value(GLib.Variant('(s)', ('; '.join(said),)))


bus.register_object('/org/verity/Echo', Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0], on_call, None, None)
bus.call_sync('org.freedesktop.DBus', '/org/freedesktop/DBus', 'org.freedesktop.DBus', 'RequestName',
              GLib.Variant('(su)', ('org.verity.Echo', 4)), None, Gio.DBusCallFlags.NONE, -1, None)
print('ready', flush=True)
GLib.MainLoop().run()
