@testable import AppearancePosix
import Foundation
import Testing
import TestSupport

/// Commands run side by side under one deadline: each outcome as soon as its child has ended and its output is
/// read, a child that goes on past the deadline killed with its group and reaped. Each test runs twice: with
/// pidfds, and with the thread that stands in for them on a kernel without. A deadline far beyond the tests'
/// time limit shows that nothing waits for it when the children end before.
@Suite struct SideBySideTests {
    static let far = 3600.0

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aChildThatExitsAtOnceIsReapedWithoutWaitingForTheDeadline(pidfd: Bool) {
        let r = SideBySide.run([["/bin/sh", "-c", "echo found; echo more >&2"], ["/bin/sh", "-c", "echo missing; exit 1"]],
                               deadline: Deadline(seconds: Self.far), pidfd: pidfd)
        #expect(r.count == 2)
        #expect(r[0]?.ok == true && r[0]?.output == "found\nmore\n", "\(r)")
        #expect(r[1]?.ok == false && r[1]?.output == "missing\n", "\(r)")
    }

    /// The output's end is not the child's: one that closes its output and ends later is waited for, and
    /// its own exit status is its outcome.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aChildThatClosesItsOutputIsWaitedForUntilItEnds(pidfd: Bool) throws {
        let dir = try TemporaryDirectory()
        let fifo = dir.path + "/go"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The child opens the fifo only once its output is closed; this thread's line then lets it end.
        let writer = Thread {
            let fd = open(fifo, O_WRONLY)
            _ = write(fd, "go\n", 3)
            close(fd)
        }
        writer.start()
        let r = SideBySide.run([["/bin/sh", "-c", "echo said; exec >&- 2>&-; read line < \(fifo); exit 3"]],
                               deadline: Deadline(seconds: Self.far), pidfd: pidfd)
        #expect(r.count == 1 && r[0]?.ok == false && r[0]?.output == "said\n", "\(r)")
    }

    /// One that closes its output and goes on is killed at the deadline, with the helpers in its group, and
    /// reaped: no outcome, and none of them is left. Another, quick one keeps its outcome.
    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aChildStillRunningAtTheDeadlineIsKilledWithItsGroup(pidfd: Bool) async throws {
        let dir = try TemporaryDirectory()
        let pids = dir.path + "/pids"
        let r = SideBySide.run([["/bin/sh", "-c", "sleep 60 & echo $! > \(pids).tmp; echo $$ >> \(pids).tmp; mv \(pids).tmp \(pids); exec >&- 2>&-; wait"],
                                ["/bin/sh", "-c", "echo quick"]],
                               deadline: Deadline(seconds: 3), pidfd: pidfd)
        #expect(r.count == 2 && r[0] == nil && r[1]?.ok == true && r[1]?.output == "quick\n", "\(r)")
        let text = try String(contentsOfFile: pids, encoding: .utf8)
        let numbers = text.split(separator: "\n").compactMap { Int32($0) }
        #expect(numbers.count == 2, "\(text)")
        // The child is reaped (no zombie left), its helper killed (then reaped by init, or a zombie of none of ours).
        #expect(kill(numbers[1], 0) == -1 && errno == ESRCH, "the child \(numbers[1]) is still there")
        _ = try await waitUntil("the helper \(numbers[0]) to be gone") {
            kill(numbers[0], 0) == -1 || Self.isZombie(numbers[0]) ? true : nil
        }
    }

    @Test(.timeLimit(.minutes(1)), arguments: [true, false])
    func aCommandThatCannotStartHasNoOutcome(pidfd: Bool) {
        let r = SideBySide.run([["/nonexistent/program"], ["/bin/true"]], deadline: Deadline(seconds: Self.far), pidfd: pidfd)
        #expect(r.count == 2 && r[0] == nil && r[1]?.ok == true, "\(r)")
    }

    @Test func theEndWatchSaysWhenTheChildHasEndedAndLeavesItToReap() throws {
        for pidfd in [true, false] {
            guard case .success(let child) = Spawned.spawn(["/bin/sh", "-c", "exit 4"]) else { Issue.record("no child"); return }
            let watch = try #require(child.endWatch(pidfd: pidfd))
            defer { watch.close() }
            #expect(try watch.wait(.readable, until: Deadline(seconds: 30)), "pidfd \(pidfd): not readable after the child ended")
            #expect(child.reap() == .exited(4), "pidfd \(pidfd)")
        }
    }

    static func isZombie(_ pid: Int32) -> Bool {
        ((try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? "").contains(") Z ")
    }
}
