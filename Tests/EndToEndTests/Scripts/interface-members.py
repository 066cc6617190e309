"""Prints one interface's members from D-Bus introspection XML, one line each, sorted: `method NAME (IN)->(OUT)`,
`signal NAME (ARGS)`, `property NAME TYPE ACCESS`. The XML comes from a file, from a GResource inside a program
(`PROGRAM:RESOURCE`, through gresource), or from an object on a bus (`ADDRESS DEST PATH`, through gdbus).
Used to hold the stand-ins in Scripts/fake-sensors.py to the interfaces Debian's real services declare.

    interface-members.py INTERFACE FILE | PROGRAM:RESOURCE | ADDRESS DEST PATH
"""
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def xml_text(where):
    if len(where) == 3:
        address, dest, path = where
        out = subprocess.run(["gdbus", "call", "--address", address, "--dest", dest, "--object-path", path, "--method",
                              "org.freedesktop.DBus.Introspectable.Introspect"], capture_output=True, text=True,
                             check=True, timeout=20).stdout
        # gdbus prints a tuple holding one quoted string.
        return out.strip()[2:-3].encode().decode("unicode_escape")
    if ":" in where[0]:
        program, resource = where[0].split(":", 1)
        return subprocess.run(["gresource", "extract", program, resource], capture_output=True, text=True, check=True,
                              timeout=20).stdout
    with open(where[0], encoding="utf-8") as f:
        return f.read()


def members(text, interface):
    root = ET.fromstring(re.sub(r"<!DOCTYPE[^>]*>", "", text))
    for node in root.iter("interface"):
        if node.get("name") != interface:
            continue
        lines = []
        for m in node.findall("method"):
            args = m.findall("arg")
            ins = "".join(a.get("type") for a in args if a.get("direction", "in") == "in")
            outs = "".join(a.get("type") for a in args if a.get("direction") == "out")
            lines.append("method %s (%s)->(%s)" % (m.get("name"), ins, outs))
        for s in node.findall("signal"):
            lines.append("signal %s (%s)" % (s.get("name"), "".join(a.get("type") for a in s.findall("arg"))))
        for p in node.findall("property"):
            lines.append("property %s %s %s" % (p.get("name"), p.get("type"), p.get("access")))
        return sorted(lines)
    sys.exit("no interface %s in the XML" % interface)


if __name__ == "__main__":
    print("\n".join(members(xml_text(sys.argv[2:]), sys.argv[1])))
