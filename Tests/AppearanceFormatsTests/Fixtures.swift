import Foundation

// The formats never read files: the tests read their fixtures themselves (the shipped config and palette,
// the toml-test corpus, the end-to-end golden files) and hand the formats text or bytes.

/// The repository's root: three folders above this file.
let repository: String = {
    #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
}()

/// The bytes of the file at `path`, or nil when it cannot be read.
func fileBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// The text of a file of Tests/EndToEndTests/Golden/ (nil when it is not there).
func golden(_ name: String) -> String? {
    fileBytes(repository + "/Tests/EndToEndTests/Golden/" + name).map { String(decoding: $0, as: UTF8.self) }
}
