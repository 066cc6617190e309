/// Short commands run all at once under one deadline, blocking: the integrations' `available` and `describe`.
public enum SideBySide {
    /// How one command ended: exit 0 or not, and what it printed (standard output and error, the first 64 KiB).
    public struct Outcome: Sendable {
        public var ok: Bool
        public var output: String
    }

    /// One command under way: its process, the reading end of its output, and what says it ended.
    private final class Run {
        let child: Spawned
        let reader: Descriptor
        /// Readable once the child has ended (`Spawned.endWatch`); nil once it says nothing more.
        var end: Descriptor?
        var output: [UInt8] = []
        var reading = true
        var status: ExitStatus?

        init(child: Spawned, reader: Descriptor, end: Descriptor?) {
            (self.child, self.reader, self.end) = (child, reader, end)
        }
    }

    /// Runs every command at once, each in a process group of its own with `Posix.childEnvironment()`: each one's
    /// outcome, or nil when it could not start or did not end by `deadline` (its group then killed).

    public static func run(_ commands: [[String]], deadline: Deadline) -> [Outcome?] { run(commands, deadline: deadline, pidfd: true) }

    /// `pidfd: false` watches the children's ends without pidfds, for the tests of what stands in for them.
    static func run(_ commands: [[String]], deadline: Deadline, pidfd: Bool) -> [Outcome?] {
        let runs: [Run?] = commands.map { argv in
            guard let (reader, writer) = try? Descriptor.socketPair() else { return nil }
            let spawned = Spawned.spawn(argv, environment: Posix.childEnvironment(), stdout: .descriptor(writer), stderr: .descriptor(writer), newProcessGroup: true)
            writer.close()
            guard case .success(let child) = spawned else { reader.close(); return nil }
            return Run(child: child, reader: reader, end: child.endWatch(pidfd: pidfd))
        }
        defer { for run in runs { run?.reader.close(); run?.end?.close() } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            // What is still open: outputs being read, ends of children not reaped.
            let live = runs.compactMap { $0 }
            let watched = live.filter(\.reading).map { ($0, $0.reader) } + live.compactMap { run in run.end.map { (run, $0) } }
            guard !watched.isEmpty, let i = try? Descriptor.firstReady(watched.map(\.1), .readable, until: deadline) else { break }
            let (run, ready) = watched[i]
            if ready === run.end {
                // Ended: reaped now (a watch that fired with nothing to reap is dropped all the same).
                run.status = run.child.reap()
                run.end?.close()
                run.end = nil
                continue
            }
            // End of output (or nothing after all), or as much as is kept: done reading this one.
            if let n = try? run.reader.read(into: buffer), n > 0 { run.output += buffer[0..<n] } else { run.reading = false }
            if run.output.count >= 64 * 1024 { run.reading = false }
        }
        return runs.map { run in
            guard let run else { return nil }
            // Not seen ending (the deadline came first, or it could not be watched): its group is killed and reaped.
            guard let status = run.status ?? run.child.reap() else {
                run.child.signalGroup(.kill)
                _ = run.child.wait()
                return nil
            }
            return Outcome(ok: status.succeeded, output: String(decoding: run.output, as: UTF8.self))
        }
    }
}
