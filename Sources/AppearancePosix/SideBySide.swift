/// Short commands run all at once, each with its output read until one deadline: what `appearancectl
/// integrations` asks each integration (`available`, `describe`), and what the daemon and `appearanced --check`
/// ask of the integrations a config names (`describe`). Blocking: for a caller that may wait that long.
public enum SideBySide {
    /// How one command ended: exit 0 or not, and what it printed (standard output and error, the first 64 KiB).
    public struct Outcome: Sendable {
        public var ok: Bool
        public var output: String
    }

    /// One command under way: its process and the reading end of its output.
    private final class Run {
        let child: Spawned
        let reader: Descriptor
        var output: [UInt8] = []
        var reading = true

        init(child: Spawned, reader: Descriptor) {
            self.child = child
            self.reader = reader
        }
    }

    /// Runs every command at once (each in a process group of its own) and reads their output until
    /// `deadline`: for each, its outcome, or nil when it could not start or did not finish in time (then its
    /// process group is killed). The output's end is not the child's: one that closes its output and goes on
    /// is waited for until the same deadline. Side by side, so a slow one costs the caller its own time, not
    /// each one's in turn.
    public static func run(_ commands: [[String]], deadline: Deadline) -> [Outcome?] {
        let runs: [Run?] = commands.map { argv in
            guard let (reader, writer) = try? Descriptor.socketPair() else { return nil }
            let spawned = Spawned.spawn(argv, stdout: .descriptor(writer), stderr: .descriptor(writer), newProcessGroup: true)
            writer.close()
            guard case .success(let child) = spawned else { reader.close(); return nil }
            return Run(child: child, reader: reader)
        }
        defer { for run in runs { run?.reader.close() } }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { buffer.deallocate() }
        while true {
            let open = runs.compactMap { $0 }.filter(\.reading)
            guard !open.isEmpty, let i = try? Descriptor.firstReady(open.map(\.reader), .readable, until: deadline) else { break }
            let run = open[i]
            // End of output (or nothing after all), or as much as is kept: done reading this one.
            if let n = try? run.reader.read(into: buffer), n > 0 { run.output += buffer[0..<n] } else { run.reading = false }
            if run.output.count >= 64 * 1024 { run.reading = false }
        }
        var results = [Outcome?](repeating: nil, count: runs.count)
        var waiting = Set(runs.indices.filter { runs[$0] != nil })
        while !waiting.isEmpty {
            for i in waiting {
                guard let run = runs[i], let status = run.child.reap() else { continue }
                results[i] = Outcome(ok: status.succeeded, output: String(decoding: run.output, as: UTF8.self))
                waiting.remove(i)
            }
            guard !waiting.isEmpty else { break }
            if deadline.passed {
                for i in waiting {
                    runs[i]?.child.signalGroup(.kill)
                    _ = runs[i]?.child.wait()
                }
                break
            }
            Posix.sleep(seconds: 0.005)
        }
        return results
    }
}
