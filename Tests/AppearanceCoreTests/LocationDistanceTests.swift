import AppearanceCore
import Testing

/// The distance the daemon uses to tell a new place from the same one (under 40 km: the same).
@Suite struct LocationDistanceTests {
    static func fix(_ lat: Double, _ lon: Double) -> LocationFix { LocationFix(latitude: lat, longitude: lon, time: 0) }

    @Test(arguments: [
        (52.52, 13.40, 48.14, 11.58, 504.0),    // Berlin–Munich
        (52.52, 13.40, 52.55, 13.45, 4.75),     // across Berlin
        (-33.87, 151.21, 51.51, -0.13, 16_994), // Sydney–London
        (0, 179.9, 0, -179.9, 22.2),            // across the date line
        (89.9, 0, 89.9, 180, 22.2),             // over the pole
    ])
    func greatCircleKilometres(lat1: Double, lon1: Double, lat2: Double, lon2: Double, km: Double) {
        let d = Self.fix(lat1, lon1).kilometres(to: Self.fix(lat2, lon2))
        #expect(abs(d - km) / km < 0.01, "\(d) km, expected about \(km)")
        #expect(abs(Self.fix(lat2, lon2).kilometres(to: Self.fix(lat1, lon1)) - d) < 1e-9)
    }

    @Test func samePlaceIsZero() {
        #expect(Self.fix(12.34, 56.78).kilometres(to: Self.fix(12.34, 56.78)) == 0)
    }
}
