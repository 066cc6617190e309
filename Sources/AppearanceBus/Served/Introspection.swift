// Introspect's XML, written from an exported object's table in the style of its shipped file. AppearanceServiceTests and
// PortalBackendTests hold it to the shipped interface files and to xdg-desktop-portal's.
enum Introspection {
    enum Style {
        /// As the shipped files: indented, empty elements closed with "/>", the standard interfaces last.
        case freedesktop(comment: String?)
        /// As godbus writes it (darkman's node): one line, end tags, the node named, the standard interfaces first.
        case godbus
    }

    static func xml(_ path: String, _ own: [ExportedInterface], _ style: Style) -> String {
        switch style {
        case .freedesktop(let comment):
            let all = (own + [.properties(own), .introspectable(""), .peer]).map { element($0, annotated: false).text(compact: false) }
            return doctype(" ") + "\n" + (comment.map { $0 + "\n" } ?? "") + "<node>\n" + all.joined() + "</node>\n"
        case .godbus:
            let all = own.map { element($0, annotated: true).text(compact: true) }
            return doctype("\t ") + "<node name=\"\(path)\">" + godbusStandard + all.joined() + "</node>"
        }
    }

    private static func doctype(_ indent: String) -> String {
        "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n\(indent)\"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">"
    }

    /// godbus's Introspectable and Properties (its prop package's), as darkman answers them.
    private static let godbusStandard = #"<interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg name="out" type="s" direction="out"></arg></method></interface><interface name="org.freedesktop.DBus.Properties"><method name="Get"><arg name="interface" type="s" direction="in"></arg><arg name="property" type="s" direction="in"></arg><arg name="value" type="v" direction="out"></arg></method><method name="GetAll"><arg name="interface" type="s" direction="in"></arg><arg name="props" type="a{sv}" direction="out"></arg></method><method name="Set"><arg name="interface" type="s" direction="in"></arg><arg name="property" type="s" direction="in"></arg><arg name="value" type="v" direction="in"></arg></method><signal name="PropertiesChanged"><arg name="interface" type="s" direction="out"></arg><arg name="changed_properties" type="a{sv}" direction="out"></arg><arg name="invalidates_properties" type="as" direction="out"></arg></signal></interface>"#

    // MARK: - Writing the XML

    private struct Element {
        let name: String
        let attributes: [(String, String)]
        var children: [Element] = []

        /// Indented for its depth with empty elements closed by "/>", or `compact`: no white space, end tags.
        func text(compact: Bool, depth: Int = 1) -> String {
            let open = "<" + name + attributes.map { " \($0.0)=\"\($0.1)\"" }.joined()
            if compact { return open + ">" + children.map { $0.text(compact: true) }.joined() + "</\(name)>" }
            let pad = String(repeating: "  ", count: depth)
            guard !children.isEmpty else { return pad + open + "/>\n" }
            return pad + open + ">\n" + children.map { $0.text(compact: false, depth: depth + 1) }.joined() + pad + "</\(name)>\n"
        }
    }

    /// Methods, then signals, then properties; `annotated`: a property that changes says it emits PropertiesChanged.
    private static func element(_ i: ExportedInterface, annotated: Bool) -> Element {
        func args(_ list: [BusArg], _ direction: String?) -> [Element] {
            list.map { Element(name: "arg", attributes: [("name", $0.name), ("type", $0.type)] + (direction.map { [("direction", $0)] } ?? [])) }
        }
        let emits = Element(name: "annotation", attributes: [("name", "org.freedesktop.DBus.Property.EmitsChangedSignal"), ("value", "true")])
        let methods = i.methods.map { Element(name: "method", attributes: [("name", $0.name)], children: args($0.inArgs, "in") + args($0.outArgs, "out")) }
        let signals = i.signals.map { Element(name: "signal", attributes: [("name", $0.name)], children: args($0.args, nil)) }
        let properties = i.properties.map { p in
            Element(name: "property", attributes: [("name", p.name), ("type", p.type), ("access", p.set == nil ? "read" : "readwrite")],
                    children: annotated && !p.constant ? [emits] : [])
        }
        return Element(name: "interface", attributes: [("name", i.name)], children: methods + signals + properties)
    }
}
