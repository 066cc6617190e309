/// The schedule's place as `status` and `schedule` report it (docs/protocol.md, "The location object"): null
/// members while there is no place yet, and `detail` says why.
public struct LocationInfo: Equatable, Sendable {
    public enum Source: String, Sendable, CaseIterable {
        /// `latitude`/`longitude` typed in the config: always wins over GeoClue.
        case config
        /// A fix GeoClue gave this daemon.
        case geoclue
        /// The last fix, kept in the state directory (`location.json`) by an earlier run.
        case cache
    }

    public var latitude: Double?
    public var longitude: Double?
    public var source: Source?
    /// When the fix was made (Unix seconds); nil for a typed place.
    public var time: Int64?
    /// Seconds from the fix to the reply; nil for a typed place.
    public var age: Int64?
    /// The location service's state in words ("GeoClue: waiting for a first fix"); nil for a typed place.
    public var detail: String?

    public init(latitude: Double? = nil, longitude: Double? = nil, source: Source? = nil, time: Int64? = nil,
                age: Int64? = nil, detail: String? = nil) {
        (self.latitude, self.longitude, self.source, self.time, self.age, self.detail) = (latitude, longitude, source, time, age, detail)
    }

    public var json: JSON {
        func number(_ d: Double?) -> JSON { d.map { $0.isFinite ? .number(String($0)) : .null } ?? .null }
        func int(_ i: Int64?) -> JSON { i.map { .int($0) } ?? .null }
        return .object([("latitude", number(latitude)), ("longitude", number(longitude)),
                        ("source", source.map { .string($0.rawValue) } ?? .null),
                        ("time", int(time)), ("age", int(age)), ("detail", detail.map { .string($0) } ?? .null)])
    }

    /// Reads a `location` object; unknown members are ignored, and a member of the wrong type is absent.
    public init(json: JSON) {
        self.init(latitude: json["latitude"]?.doubleValue, longitude: json["longitude"]?.doubleValue,
                  source: json.raw("source"), time: json["time"]?.intValue.map(Int64.init),
                  age: json["age"]?.intValue.map(Int64.init), detail: json["detail"]?.stringValue)
    }

    /// "52.52, 13.40 (geoclue, fix 2 h old)", "none yet: GeoClue refused …": for people.
    public var summary: String {
        guard let latitude, let longitude, let source else { return "none yet" + (detail.map { ": " + $0 } ?? "") }
        var text = "\(Self.degrees(latitude)), \(Self.degrees(longitude)) (\(source.rawValue)"
        if let age { text += ", fix \(Self.describeAge(age)) old" }
        text += ")"
        if let detail { text += "; " + detail }
        return text
    }

    /// Two decimals, as the daemon keeps them: "52.52", "-0.10", "13.00".
    public static func degrees(_ v: Double) -> String {
        let hundredths = Int64((abs(v) * 100).rounded())
        let (whole, part) = hundredths.quotientAndRemainder(dividingBy: 100)
        return (v < 0 && hundredths != 0 ? "-" : "") + "\(whole)." + (part < 10 ? "0" : "") + "\(part)"
    }

    /// "45 s", "12 min", "3 h", "2 days".
    public static func describeAge(_ seconds: Int64) -> String {
        let s = max(0, seconds)
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 2 * 86_400 { return "\(s / 3600) h" }
        return "\(s / 86_400) days"
    }
}
