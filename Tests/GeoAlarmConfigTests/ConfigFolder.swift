import Foundation

/// A fresh folder holding `files` (path within it → text; its folders made) and a config.toml
/// with `config`; returns the config's path. For the files a config names beside it
/// (collections, icons).
func configFolder(_ config: String, _ files: [String: String]) throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("geoalarm-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for (name, text) in files {
        let file = URL(fileURLWithPath: "\(directory)/\(name)")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
    }
    try config.write(toFile: "\(directory)/config.toml", atomically: true, encoding: .utf8)
    return "\(directory)/config.toml"
}
