/// Where the reminders file is looked for when `--config` is not given.
public enum ConfigLocation {
    /// `$XDG_CONFIG_HOME/geoalarm/config.toml`, `~/.config/geoalarm/config.toml`, `/etc/geoalarm/config.toml`,
    /// in that order, without duplicates.
    public static func searchPaths(environment: [String: String]) -> [String] {
        var paths: [String] = []
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            paths.append("\(xdg)/geoalarm/config.toml")
        }
        if let home = environment["HOME"], !home.isEmpty {
            let path = "\(home)/.config/geoalarm/config.toml"
            if !paths.contains(path) { paths.append(path) }
        }
        paths.append("/etc/geoalarm/config.toml")
        return paths
    }

    /// Where a user's own config goes when there is none yet: `$XDG_CONFIG_HOME/geoalarm/config.toml`,
    /// else `~/.config/geoalarm/config.toml`; nil without either variable.
    public static func userPath(environment: [String: String]) -> String? {
        searchPaths(environment: environment).first { !$0.hasPrefix("/etc/") }
    }

    /// The text of a config `geoalarm add` creates: a header pointing to the example.
    public static let newConfigHeader = """
        # geoalarm reminders, in TOML. Every key is described in the example config:
        # /usr/share/doc/geoalarm/example.toml once installed, config/example.toml in the source.
        # `geoalarm check` validates this file; `geoalarm add` and `geoalarm remove` edit it.

        """

    /// Where command hooks live: `$XDG_CONFIG_HOME/geoalarm/hooks`, else `~/.config/geoalarm/hooks`.
    public static func hooksDirectory(environment: [String: String]) -> String? {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return "\(xdg)/geoalarm/hooks" }
        if let home = environment["HOME"], !home.isEmpty { return "\(home)/.config/geoalarm/hooks" }
        return nil
    }

    /// The explicit path when given, else the first search path that exists.
    public static func resolve(
        explicit: String?, environment: [String: String], exists: (String) -> Bool
    ) throws(ConfigNotFound) -> String {
        if let explicit { return explicit }
        let tried = searchPaths(environment: environment)
        guard let found = tried.first(where: exists) else { throw ConfigNotFound(tried: tried) }
        return found
    }
}

/// No config file at any of the default places.
public struct ConfigNotFound: Error, Sendable, CustomStringConvertible {
    /// The paths looked at, in order.
    public var tried: [String]

    public init(tried: [String]) {
        self.tried = tried
    }

    public var description: String {
        "no config file found; tried \(tried.joined(separator: ", ")). "
            + "Create one (see config/example.toml) or pass --config FILE."
    }
}
