/// Sunrise and sunset from latitude and longitude, computed locally: the NOAA solar calculator's equations
/// (Jean Meeus, "Astronomical Algorithms"), for the sun's upper limb at the horizon: zenith 90.789°, the
/// sun's apparent radius (16') plus the refraction at the horizon (31.3'), as the astral package computes
/// it, which the tests compare against. Beyond the polar circles a day with no sunrise or no sunset is
/// reported as such. Pure: no clock, no time zone.
#if canImport(Glibc)
import Glibc
#endif

public enum Sun {
    /// What the sun does on one UTC day at one place.
    public enum Day: Equatable, Sendable {
        /// Sunrise and sunset as Unix times (seconds).
        case riseAndSet(rise: Int64, set: Int64)
        /// The sun stays above the horizon all day (polar day), or below it (polar night).
        case alwaysUp, alwaysDown
    }

    /// The sun's rise and set on the UTC day that starts at `utcMidnight` (Unix seconds, a multiple of 86,400).
    public static func day(utcMidnight: Int64, latitude: Double, longitude: Double) -> Day {
        let julianDay = Double(utcMidnight) / 86_400 + 2_440_587.5
        guard let rise = event(julianDay, latitude, longitude, rising: true),
              let set = event(julianDay, latitude, longitude, rising: false) else {
            // No crossing: up or down all day, by the sun's height at local noon.
            let noon = julianDay + (720 - 4 * longitude) / 1440
            let decl = declination(century(noon))
            let elevation = 90 - abs(latitude - decl)
            return elevation > 90 - zenith ? .alwaysUp : .alwaysDown
        }
        return .riseAndSet(rise: utcMidnight + Int64((rise * 60).rounded()), set: utcMidnight + Int64((set * 60).rounded()))
    }

    static let zenith = 90.78910713534157

    /// Minutes after UTC midnight of sunrise or sunset: computed with the sun's position at midnight, then
    /// once more at the time found; nil when the sun does not cross the horizon that day.
    private static func event(_ julianDay: Double, _ latitude: Double, _ longitude: Double, rising: Bool) -> Double? {
        let latitude = max(-89.8, min(89.8, latitude))
        var minutes = 0.0
        for _ in 0..<2 {
            let t = century(julianDay + minutes / 1440)
            let decl = declination(t)
            let cosH = (cos(rad(zenith)) - sin(rad(latitude)) * sin(rad(decl))) / (cos(rad(latitude)) * cos(rad(decl)))
            guard cosH >= -1, cosH <= 1 else { return nil }
            let hourAngle = deg(acos(cosH)) * (rising ? 1 : -1)
            var offset = -4 * (longitude + hourAngle) - equationOfTime(t)
            if offset < -720 { offset += 1440 }
            minutes = 720 + offset
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
