extension StringProtocol {
    /// The text without the characters at either end for which `isTrimmed` holds.
    public func trimming(while isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }

    /// The text without blanks at either end: spaces, tabs, line ends and the other characters
    /// Unicode calls white space.
    public func trimmingWhitespace() -> String { trimming(while: \.isWhitespace) }
}
