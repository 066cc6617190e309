import AppearanceCLI
import AppearanceFormats
import AppearancePosix

// The files the imports read and write: bounded reads, atomic writes, nothing replaced without being asked.

/// The largest plist `palette import` reads: color bundles are a few KiB.
let importLimit = 4 << 20

/// Reads a regular file of at most `importLimit` bytes; exits 66 (EX_NOINPUT) naming it when it cannot.
func readFile(_ path: String) -> String {
    do {
        return String(decoding: try FileSystem.readAll(path, limit: importLimit, regularOnly: true), as: UTF8.self)
    } catch {
        let why = switch error.code {
        case Errno.invalid, Errno.isDirectory: "not a regular file"
        case Errno.tooBig: "larger than \(importLimit) bytes"
        default: error.message
        }
        stop(66, "cannot read \(shown(path)): \(why)")
    }
}

/// Replaces `path` with `text` atomically, making the folders on the way; exits 73 (EX_CANTCREAT) when it cannot.
func writeFile(_ path: String, _ text: String, permissions: UInt32 = 0o644) {
    do throws(Errno) {
        try FileSystem.makeDirectories(FileSystem.directory(of: path), permissions: 0o755)
        try FileSystem.writeAtomically(path, Array(text.utf8), permissions: permissions)
    } catch {
        stop(73, "cannot write \(shown(path)): \(error.message)")
    }
}

/// `import-darkman -o FILE --merge` with a FILE that exists: adds what it lacks, keeping every byte of it and
/// its permissions; a conflict, invalid TOML or a symlink leave it untouched, exit 65.
func mergeInto(_ path: String, _ result: DarkmanImport) {
    func refuse(_ why: String) -> Never { stop(Exit.rejected, shown(why)) }
    let st: FileStatus
    do { st = try FileSystem.status(path, followLinks: false) } catch { refuse("cannot read \(path): \(error.message)") }
    guard st.kind == .regular else { refuse("\(path) is not a regular file (a symlink?): merge by hand; nothing written") }
    let merged: ConfigMerge.Result
    do { merged = try ConfigMerge.merge(readFile(path), file: path, adding: result.entries) } catch { refuse(error.description) }
    do { _ = try Config.parse(merged.text, path: path) } catch { refuse("\(path): the merged config would not be valid (\(error)); nothing written") }
    for n in result.notes { note(shown(n)) }
    guard !merged.added.isEmpty else { return note("\(shown(path)) has every setting already; nothing written") }
    writeFile(path, merged.text, permissions: st.permissions & 0o7777)
    note("added to \(shown(path)): \(merged.added.joined(separator: ", "))")
}

/// `-o FILE` of the imports: a file that exists is not replaced without `--force` (exit 73, before anything).

func refuseToReplace(_ path: String?, force: Bool, mergeable: Bool = false) {
    guard let path, !force, FileSystem.exists(path) else { return }
    stop(73, "\(shown(path)) exists; give \(mergeable ? "--merge to add to it what it lacks, or " : "")--force to replace it")
}
