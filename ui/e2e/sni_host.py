#!/usr/bin/python3
"""The tray side of a desktop panel, for the app's end-to-end tests.

Panels show tray icons through the StatusNotifierItem protocol: a
`org.kde.StatusNotifierWatcher` on the session bus that apps register their
item with, and each item's menu exported over `com.canonical.dbusmenu`.
Xvfb has no panel, so this process plays one: it owns the watcher name,
announces a host, and prints one JSON line per registered item. Commands on
stdin, one per line, answered with one JSON line each on stdout:

    menu           the first item's menu: [{"id", "label", "toggle_state"}]
    click <label>  clicks the menu entry with that label, as a user would

Uses the system's python3-dbus and python3-gi (scripts/e2e installs them).
"""
import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

WATCHER = "org.kde.StatusNotifierWatcher"
ITEM = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"


def say(obj):
    print(json.dumps(obj), flush=True)


class Watcher(dbus.service.Object):
    def __init__(self, bus):
        self.bus = bus
        self.items = []  # (bus name, object path)
        self.name = dbus.service.BusName(WATCHER, bus, do_not_queue=True)
        super().__init__(self.name, "/StatusNotifierWatcher")

    @dbus.service.method(WATCHER, in_signature="s", sender_keyword="sender")
    def RegisterStatusNotifierItem(self, service, sender=None):
        # An item names itself by object path (on the caller's connection) or by bus name.
        if service.startswith("/"):
            item = (sender, service)
        else:
            item = (service, "/StatusNotifierItem")
        self.items.append(item)
        self.StatusNotifierItemRegistered(f"{item[0]}{item[1]}")
        say({"registered": {"bus": item[0], "path": item[1]}})

    @dbus.service.method(WATCHER, in_signature="s")
    def RegisterStatusNotifierHost(self, service):
        pass

    @dbus.service.signal(WATCHER, signature="s")
    def StatusNotifierItemRegistered(self, item):
        pass

    @dbus.service.signal(WATCHER, signature="")
    def StatusNotifierHostRegistered(self):
        pass

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, prop):
        return self.GetAll(interface)[prop]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "RegisteredStatusNotifierItems": dbus.Array(
                [f"{b}{p}" for b, p in self.items], signature="s"
            ),
            "IsStatusNotifierHostRegistered": dbus.Boolean(True),
            "ProtocolVersion": dbus.Int32(0),
        }

    def menu(self):
        """The first item's menu object, and its entries."""
        if not self.items:
            raise RuntimeError("no item has registered")
        bus_name, path = self.items[0]
        item = self.bus.get_object(bus_name, path)
        menu_path = item.Get(ITEM, "Menu", dbus_interface=dbus.PROPERTIES_IFACE)
        menu = dbus.Interface(self.bus.get_object(bus_name, menu_path), MENU)
        _revision, layout = menu.GetLayout(0, -1, dbus.Array([], signature="s"))
        entries = []
        for child in layout[2]:
            cid, props, _ = child
            if props.get("type") == "separator":
                continue
            entries.append({
                "id": int(cid),
                "label": str(props.get("label", "")),
                "toggle_state": int(props["toggle-state"]) if "toggle-state" in props else None,
            })
        return menu, entries


def command(watcher, line):
    verb, _, arg = line.strip().partition(" ")
    try:
        if verb == "menu":
            return {"menu": watcher.menu()[1]}
        if verb == "click":
            menu, entries = watcher.menu()
            found = [e for e in entries if e["label"] == arg]
            if not found:
                return {"error": f"no menu entry '{arg}' in {[e['label'] for e in entries]}"}
            menu.Event(
                dbus.Int32(found[0]["id"]), "clicked", dbus.Int32(0, variant_level=1), dbus.UInt32(0)
            )
            return {"clicked": arg}
        return {"error": f"unknown command '{verb}'"}
    except Exception as e:  # reported to the test, which fails with it
        return {"error": str(e)}


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    watcher = Watcher(bus)
    watcher.StatusNotifierHostRegistered()
    loop = GLib.MainLoop()

    def on_input(source, _condition):
        line = source.readline()
        if not line:
            loop.quit()
            return False
        say(command(watcher, line))
        return True

    GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, on_input)
    say({"ready": True})
    loop.run()


if __name__ == "__main__":
    main()
