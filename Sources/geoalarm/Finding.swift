import GeoAlarmCore

/// What one check of `doctor` (or `check --state`) found, printed as one line with what to do.
struct Finding {
    enum Verdict: String {
        /// As it should be.
        case ok
        /// Not a fault, but worth a step (a unit installed and not enabled).
        case note
        /// Does not apply here (pop-ups when headless, systemd where it does not run).
        case skip
        /// Wrong: geoalarm cannot do its work until it is fixed.
        case fail = "FAIL"
    }

    var verdict: Verdict
    /// "config", "gpsd", "fix", "geoclue", "source", "notifications", "state", "hooks", "systemd".
    var subject: String
    var detail: String
    /// What to do about it, when there is something to do.
    var advice: String?

    init(_ verdict: Verdict, _ subject: String, _ detail: String, advice: String? = nil) {
        self.verdict = verdict
        self.subject = subject
        self.detail = detail
        self.advice = advice
    }

    /// "FAIL  gpsd: localhost:2947: connection refused. Do: start gpsd (...)", its control
    /// characters escaped (a path, or what a server said of itself, may hold them). A detail
    /// that is already a sentence (an error's message) keeps its own full stop.
    var line: String {
        let label = verdict.rawValue + String(repeating: " ", count: max(0, 5 - verdict.rawValue.count))
        let stop = detail.hasSuffix(".") ? " " : ". "
        return DisplayText.escaped("\(label) \(subject): \(detail)" + (advice.map { stop + "Do: \($0)" } ?? ""))
    }
}
