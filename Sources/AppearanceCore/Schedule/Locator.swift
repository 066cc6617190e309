#if canImport(Glibc)
import Glibc
#endif

/// The schedule's place with `location = "geoclue"`: a source of fixes (AppearanceBus/Followed/GeoClue.swift).
public protocol Locator: AnyObject {
    /// Starts following the location; `report` is told every fix, and every change of why there is none.
    func start(report: @escaping (LocatorReport) -> Void)
    func stop()
}

/// One place, as a location service gives it.
public struct LocationFix: Equatable, Sendable {
    /// Degrees, north positive (-90…90).
    public var latitude: Double
    /// Degrees, east positive (-180…180).
    public var longitude: Double
    /// When the fix was made (Unix time); 0 when the service said nothing (the daemon stamps its arrival then).
    public var time: Int64

    public init(latitude: Double, longitude: Double, time: Int64) {
        (self.latitude, self.longitude, self.time) = (latitude, longitude, time)
    }

    /// Moves shorter than this keep the place the schedule uses (GeoClue is asked for the same threshold).
    public static let samePlaceKilometres = 40.0

    /// The great-circle distance to `other`, in km (haversine, on a sphere of 6,371 km).
    public func kilometres(to other: LocationFix) -> Double {
        let r = Double.pi / 180
        let dLat = (other.latitude - latitude) * r, dLon = (other.longitude - longitude) * r
        let a = sin(dLat / 2) * sin(dLat / 2) + cos(latitude * r) * cos(other.latitude * r) * sin(dLon / 2) * sin(dLon / 2)
        return 2 * 6371 * asin(min(1, a.squareRoot()))
    }

    /// A place a schedule can use: both coordinates finite and in range.
    public var isValid: Bool { latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180 }

    /// The fix with both coordinates rounded to two decimals (about 1 km: no more than the town).
    public var rounded: LocationFix {
        func r(_ v: Double) -> Double {
            let x = (v * 100).rounded() / 100
            return x == 0 ? 0 : x  // no "-0.0"
        }
        return LocationFix(latitude: r(latitude), longitude: r(longitude), time: time)
    }
}

/// What a locator tells the daemon.
public enum LocatorReport: Equatable, Sendable {
    case fix(LocationFix)
    /// Why there is no fix from it now, in words for `status`; `trouble` when something is wrong, `retryIn` the
    /// seconds until it tries again.
    case state(String, trouble: Bool = false, retryIn: Int? = nil)
}
