import AppearanceCore
import AppearanceProtocol

/// `[light-sensor]` of config.toml: the mode by the light in the room (iio-sensor-proxy's ambient light sensor).
public struct LightSensorSettings: Equatable, Sendable {
    /// Below this level the room is dark (lux, or the sensor's own unit when it reports "vendor").
    public var darkBelow: Double = 40
    /// Above this level it is light; between the two the schedule (or the default) decides.
    public var lightAbove: Double = 80
    /// Seconds the level must stay past a threshold before the mode changes.
    public var delay: Int64 = 10

    public init(darkBelow: Double = 40, lightAbove: Double = 80, delay: Int64 = 10) {
        (self.darkBelow, self.lightAbove, self.delay) = (darkBelow, lightAbove, delay)
    }

    /// The longest `delay`: an hour.
    public static let maxDelay: Int64 = 3600
    /// The highest threshold: brighter than direct sunlight (about 100,000 lux).
    public static let maxLevel: Double = 200_000
}

extension Config {
    public static let lightSensorKeys = ["dark-below", "light-above", "delay"]
    public static let powerKeys = ["on-battery"]

    /// `[light-sensor]`: two levels (dark-below < light-above) and a delay.
    static func parseLightSensor(_ table: TOMLTable, line: Int, path: String) throws(ConfigError) -> LightSensorSettings {
        var s = LightSensorSettings()
        for entry in table.entries {
            let v = entry.value, key = entry.key
            switch key {
            case "dark-below", "light-above":
                guard let level = Self.level(v) else {
                    let expected = "a level in lux from 0 to \(Int(LightSensorSettings.maxLevel))"
                    throw .expected(expected, "light-sensor.\(key)", v, path)
                }
                if key == "dark-below" { s.darkBelow = level } else { s.lightAbove = level }
            case "delay":
                let limit = LightSensorSettings.maxDelay
                let expected = "a duration such as \"10s\", \"1m\" (units h, m, s), from 0s to "
                    + Notice.duration(limit)
                s.delay = try duration("light-sensor.delay", v, expected: expected, limit: limit, zero: true,
                                       path: path)
            default:
                throw .unknown("light-sensor.\(key)", v, known: lightSensorKeys, path)
            }
        }
        guard s.darkBelow < s.lightAbove else {
            throw ConfigError(path: path, line: line, message: "light-sensor: light-above (\(shownLevel(s.lightAbove))) must be above dark-below (\(shownLevel(s.darkBelow)))")
        }
        return s
    }

    /// A level a threshold may be: a number from 0 to `maxLevel`.
    private static func level(_ value: TOMLValue) -> Double? {
        let number: Double
        if let f = value.float { number = f } else if let i = value.integer { number = Double(i) } else { return nil }
        return number.isFinite && number >= 0 && number <= LightSensorSettings.maxLevel ? number : nil
    }

    /// `[power]`: the mode while on battery.
    static func parsePower(_ table: TOMLTable, path: String) throws(ConfigError) -> Mode? {
        var mode: Mode?
        for (key, v) in table.entries {
            guard key == "on-battery" else { throw .unknown("power.\(key)", v, known: powerKeys, path) }
            guard let m = v.string.flatMap(Mode.init(rawValue:)) else {
                throw .expected("\"dark\" or \"light\"", "power.on-battery", v, path)
            }
            mode = m
        }
        return mode
    }

    public static func shownLevel(_ level: Double) -> String {
        level == level.rounded() && abs(level) < 1e15 ? String(Int64(level)) : String(level)
    }
}
