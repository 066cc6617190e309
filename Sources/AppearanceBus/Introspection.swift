/// The pieces every object appearanced serves on the bus shares in its introspection XML (the D-Bus face and
/// the portal backend): the DTD line, and the standard interfaces (Properties, Introspectable, Peer) as
/// `<interface>` elements indented for their `<node>`. BusFaceTests and PortalBackendTests hold the whole XML
/// to the shipped interface files.
enum Introspection {
    static let doctype = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        """

    static func standardInterfaces(propertiesChanged: Bool) -> String {
        (propertiesChanged ? [properties, propertiesChangedSignal, others] : [properties, others]).joined(separator: "\n")
    }

    /// Properties' methods; the interface is closed by `others`.
    private static let properties = """
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
        """

    private static let propertiesChangedSignal = """
            <signal name="PropertiesChanged">
              <arg name="interface_name" type="s"/>
              <arg name="changed_properties" type="a{sv}"/>
              <arg name="invalidated_properties" type="as"/>
            </signal>
        """

    /// The end of Properties, then Introspectable and Peer.
    private static let others = """
          </interface>
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
        """
}
