/// Sunrise and sunset from latitude and longitude: the NOAA solar calculator's equations for the sun's upper limb
/// (zenith 90.789°, as the astral package the tests compare against). Pure: no clock, no time zone.
#if canImport(Glibc)
import Glibc
#endif

public enum Sun {
    /// The sun's crossings of the horizon around one solar noon, as Unix times; nil where it does not cross.
    public struct Crossings: Equatable, Sendable {
        public var rise: Int64?
        public var set: Int64?
    }

    /// The crossings around the place's solar noon on UTC day `day` (days since 1970-01-01): absolute times, each
    /// coming exactly once one solar day after another, whatever the time zone.
    public static func crossings(day: Int64, latitude: Double, longitude: Double) -> Crossings {
        let utcMidnight = day * 86_400
        let julianDay = Double(day) + 2_440_587.5
        func instant(_ minutes: Double?) -> Int64? { minutes.map { utcMidnight + Int64(($0 * 60).rounded()) } }
        return Crossings(rise: instant(event(julianDay, latitude, longitude, rising: true)),
                         set: instant(event(julianDay, latitude, longitude, rising: false)))
    }

    /// Whether the sun's upper limb is above the horizon at `time`: what a polar day or night is.
    public static func isUp(at time: Int64, latitude: Double, longitude: Double) -> Bool {
        let latitude = max(-89.8, min(89.8, latitude))
        let t = century(Double(time) / 86_400 + 2_440_587.5)
        let utcMinutes = Double(((time % 86_400) + 86_400) % 86_400) / 60
        let hourAngle = (utcMinutes + equationOfTime(t) + 4 * longitude) / 4 - 180
        let decl = declination(t)
        let cosZenith = sin(rad(latitude)) * sin(rad(decl)) + cos(rad(latitude)) * cos(rad(decl)) * cos(rad(hourAngle))
        return deg(acos(max(-1, min(1, cosZenith)))) < zenith
    }

    static let zenith = 90.78910713534157

    /// Minutes after UTC midnight of sunrise or sunset around that date's solar noon (computed twice, the second
    /// time at the time found); nil when the sun does not cross the horizon that way.
    private static func event(_ julianDay: Double, _ latitude: Double, _ longitude: Double, rising: Bool) -> Double? {
        let latitude = max(-89.8, min(89.8, latitude))
        var minutes = 0.0
        for _ in 0..<2 {
            let t = century(julianDay + minutes / 1440)
            let decl = declination(t)
            let cosH = (cos(rad(zenith)) - sin(rad(latitude)) * sin(rad(decl))) / (cos(rad(latitude)) * cos(rad(decl)))
            guard cosH >= -1, cosH <= 1 else { return nil }
            let hourAngle = deg(acos(cosH)) * (rising ? 1 : -1)
            minutes = 720 - 4 * (longitude + hourAngle) - equationOfTime(t)
        }
        return minutes
    }

    private static func century(_ julianDay: Double) -> Double { (julianDay - 2_451_545) / 36_525 }

    private static func meanLongitude(_ t: Double) -> Double {
        var l = (280.46646 + t * (36_000.76983 + t * 0.0003032)).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l
    }

    private static func meanAnomaly(_ t: Double) -> Double { 357.52911 + t * (35_999.05029 - 0.0001537 * t) }

    private static func eccentricity(_ t: Double) -> Double { 0.016708634 - t * (0.000042037 + 0.0000001267 * t) }

    private static func equationOfCenter(_ t: Double) -> Double {
        let m = rad(meanAnomaly(t))
        return sin(m) * (1.914602 - t * (0.004817 + 0.000014 * t)) + sin(2 * m) * (0.019993 - 0.000101 * t)
            + sin(3 * m) * 0.000289
    }

    private static func apparentLongitude(_ t: Double) -> Double {
        let trueLongitude = meanLongitude(t) + equationOfCenter(t)
        let omega = 125.04 - 1934.136 * t
        return trueLongitude - 0.00569 - 0.00478 * sin(rad(omega))
    }

    private static func obliquity(_ t: Double) -> Double {
        let seconds = 21.448 - t * (46.815 + t * (0.00059 - t * 0.001813))
        let mean = 23 + (26 + seconds / 60) / 60
        return mean + 0.00256 * cos(rad(125.04 - 1934.136 * t))
    }

    private static func declination(_ t: Double) -> Double {
        deg(asin(sin(rad(obliquity(t))) * sin(rad(apparentLongitude(t)))))
    }

    /// Minutes.
    private static func equationOfTime(_ t: Double) -> Double {
        let epsilon = rad(obliquity(t)), l0 = rad(meanLongitude(t)), e = eccentricity(t), m = rad(meanAnomaly(t))
        var y = tan(epsilon / 2)
        y *= y
        let e1 = y * sin(2 * l0) - 2 * e * sin(m) + 4 * e * y * sin(m) * cos(2 * l0)
        let e2 = -0.5 * y * y * sin(4 * l0) - 1.25 * e * e * sin(2 * m)
        return 4 * deg(e1 + e2)
    }

    private static func rad(_ d: Double) -> Double { d * .pi / 180 }
    private static func deg(_ r: Double) -> Double { r * 180 / .pi }
}
