import AppearanceCore
import AppearanceFormats
import AppearancePosix
import AppearanceProtocol
import Dispatch

/// The schedule's location (docs/architecture.md): the schedule's place with `location = "geoclue"`, the last fix kept
/// in `location.json`. Confined to the daemon's queue.
final class LocationTracker: @unchecked Sendable {
    private let queue: DispatchQueue
    private let log: Logger
    private let clock: Clock
    private let locator: Locator?
    /// `location.json` beside state.json.
    let file: String
    private let files: SmallFiles
    /// Whether the locator runs (the config asks for GeoClue).
    private var following = false
    /// location.json, read once: when GeoClue is first followed.
    private lazy var cacheRead: Void = readCache()
    /// The place in use, rounded, and where it came from (GeoClue this run, or the cache).
    private(set) var fix: LocationFix?
    private(set) var source: LocationInfo.Source?
    /// The locator's state in words ("waiting for a first fix", "GeoClue refused …").
    private(set) var detail = "not started"
    /// The trouble last warned about (the journal hears it once, not at every retry).
    private var lastWarning: String?
    /// The place changed: plan the schedule again.
    var onChange: () -> Void = {}
    /// A new place plans the schedule again (and is saved) at most once in this many seconds: a storm of fixes
    /// waits, and the newest place is planned with when the spacing ends.
    static let replanSpacing = 300
    private var lastPlanned: DispatchTime?
    private var lastSaved: DispatchTime?
    /// The re-plan waiting for the spacing to end, and when it comes (wall-clock, for `status`).
    private var pendingPlan: (work: DispatchWorkItem, at: Int64)? { didSet { oldValue?.work.cancel() } }

    init(queue: DispatchQueue, log: Logger, clock: Clock, stateFile: String, locator: Locator?, files: SmallFiles) {
        (self.files, self.queue, self.log, self.clock, self.locator) = (files, queue, log, clock, locator)
        file = FileSystem.directory(of: stateFile) + "/location.json"
    }

    /// Starts or stops following GeoClue as `config` asks (at start and after every reload; idempotent).
    func follow(_ config: Config) {
        dispatchPrecondition(condition: .onQueue(queue))
        let wanted = config.scheduleFromGeoClue && config.schedule.latitude == nil
        guard wanted != following else { return }
        following = wanted
        guard wanted else {
            pendingPlan = nil
            locator?.stop()
            detail = "not started"
            return
        }
        _ = cacheRead
        guard let locator else {
            detail = "no location service in this instance"
            return
        }
        detail = "starting"
        locator.start { [weak self] report in self?.reported(report) }
    }

    /// The schedule in force: the config's, with GeoClue's (or the cached) place when it asks for one; with no
    /// place yet and not both fixed times, none (a lone light-at would read as a polar day).
    func schedule(for config: Config) -> Schedule {
        var s = config.schedule
        guard config.scheduleFromGeoClue, s.latitude == nil else { return s }
        guard let fix else { return s.lightAt != nil && s.darkAt != nil ? s : Schedule() }
        (s.latitude, s.longitude) = (fix.latitude, fix.longitude)
        return s
    }

    /// What `status` and `schedule` say of the place; nil when the schedule uses none.
    func info(for config: Config) -> LocationInfo? {
        let s = config.schedule
        if let latitude = s.latitude, let longitude = s.longitude {
            return LocationInfo(latitude: latitude, longitude: longitude, source: .config)
        }
        guard config.scheduleFromGeoClue else { return nil }
        return LocationInfo(latitude: fix?.latitude, longitude: fix?.longitude, source: fix == nil ? nil : source,
                            time: fix?.time, age: fix.map { max(0, clock.now() - $0.time) }, detail: "GeoClue: " + detail
                                + (pendingPlan.map { "; the newest place is planned with at \(Clock.describe($0.at, from: clock.now()))" } ?? ""))
    }

    private func reported(_ report: LocatorReport) {
        guard following else { return }
        switch report {
        case .state(let text, let trouble, let retryIn):
            detail = text + (retryIn.map { "; trying again in \($0) s" } ?? "")
            // One warning per trouble, not one per retry.
            if trouble {
                if text != lastWarning {
                    log.warning("GeoClue: \(detail.split(separator: "\n").joined(separator: " "))"
                                + (fix == nil ? "" : "; the schedule keeps the last place"))
                }
                lastWarning = text
            } else if text.hasPrefix("following") || text.hasPrefix("started") {
                lastWarning = nil
            }
        case .fix(var f):
            if f.time <= 0 { f.time = clock.now() }
            f = f.rounded
            // A move under 40 km (GeoClue's threshold, which a source may ignore): the place stays, confirmed.
            if let old = fix, old.kilometres(to: f) < LocationFix.samePlaceKilometres {
                (f.latitude, f.longitude) = (old.latitude, old.longitude)
            }
            let moved = fix.map { $0.latitude != f.latitude || $0.longitude != f.longitude } ?? true
            (fix, source) = (f, .geoclue)
            // The place itself goes to the log only at debug level: it is the user's whereabouts.
            log.debug("GeoClue's place: \(LocationInfo.degrees(f.latitude)), \(LocationInfo.degrees(f.longitude))")
            let now = DispatchTime.now()
            let spacing = DispatchTimeInterval.seconds(Self.replanSpacing)
            guard moved else {
                if lastSaved.map({ now >= $0 + spacing }) ?? true { lastSaved = now; save(f) }
                log.info("GeoClue confirmed the place")
                return
            }
            guard let last = lastPlanned, now < last + spacing else { return planNewPlace() }
            guard pendingPlan == nil else { return }  // the waiting re-plan takes the newest place
            let work = DispatchWorkItem { [weak self] in self?.planNewPlace() }
            let elapsed = Int64((now.uptimeNanoseconds - last.uptimeNanoseconds) / 1_000_000_000)
            let at = clock.now() + Int64(Self.replanSpacing) - elapsed
            pendingPlan = (work, at)
            queue.asyncAfter(deadline: last + spacing, execute: work)
            log.info("GeoClue gave another new place within \(Self.replanSpacing / 60) min of the last: the schedule follows the newest at \(Clock.describe(at, from: clock.now()))")
        }
    }

    /// Plans the schedule for the newest place, and keeps it in location.json.
    private func planNewPlace() {
        pendingPlan = nil
        guard following, let fix else { return }
        lastPlanned = .now()
        lastSaved = lastPlanned
        save(fix)
        log.info("GeoClue gave a new place: planning the schedule again")
        onChange()
    }

    // MARK: The cache

    /// Reads location.json (a file that cannot be used is kept aside as `location.json.corrupt`, and said).
    private func readCache() {
        let tooBig = "is not a valid location file: larger than \(LocationFile.readLimit) bytes"
        let (bytes, problem) = readOwnFile(file, limit: LocationFile.readLimit, tooBig: tooBig)
        switch bytes.map(LocationFile.parse) {
        case .success(let f)?:
            (fix, source) = (f, .cache)
            log.info("using the last place GeoClue gave (\(file)) until it gives one")
        case .failure(let invalid)?: keepAside(file, invalid.problem, then: "waiting for GeoClue", log: log)
        case nil: if let problem { keepAside(file, problem, then: "waiting for GeoClue", log: log) }
        }
    }

    /// Writes location.json (SmallFiles: durably, replacing it whole); a failure is logged.
    private func save(_ fix: LocationFix) {
        let file = self.file
        files.write(file, LocationFile.encode(fix)) { [log] error in
            if let error { log.warning("could not keep the place in \(file) (\(error)); it is used until appearanced stops") }
        }
    }
}

extension Daemon {
    /// The schedule in force now: the config's, with GeoClue's place when it asks for one.
    var scheduleInForce: Schedule { location.schedule(for: settings.config) }

    /// The place for `status` and `schedule`.
    var locationInfo: LocationInfo? { location.info(for: settings.config) }

    /// The reply to `schedule`.
    func scheduleReply(days: Int) -> ScheduleInfo {
        var info = timers.upcoming(scheduleInForce, days: days, state: (engine.state.source, engine.inputs.nextChange))
        info.location = locationInfo
        // Waiting for GeoClue's first place, with no fixed time to go by: a schedule, with nothing planned yet.
        if !info.configured, settings.config.scheduleFromGeoClue { info.configured = true }
        info.waiting = waitingForIdle
        return info
    }
}

extension Daemon {
    /// What `status` says of the schedule, with its place, or "waiting for a place: …".
    var scheduleDetail: String? {
        let place = locationInfo
        guard let plan = timers.scheduleDetail(engine.inputs.nextChange) else {
            guard settings.config.scheduleFromGeoClue, let place else { return nil }
            return "waiting for a place (\(place.summary))"
        }
        return place.map { "\(plan); place \($0.summary)" } ?? plan
    }
}
