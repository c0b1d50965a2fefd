/// "Did you mean" for near misses of a known word.
public enum Suggestion {
    /// The known word closest to `word` by edit distance, when close enough to be a typo.
    public static func closest(to word: String, among known: [String]) -> String? {
        let length = word.count
        let threshold = max(1, min(3, length / 3))
        // Words whose lengths differ by more than the threshold are further apart than it: not
        // measured, so that a key as long as the file costs no table of its length.
        let lowered = word.lowercased()
        let scored = known.filter { abs($0.count - length) <= threshold }.map { ($0, editDistance(lowered, $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= threshold else { return nil }
        return best.0
    }

    /// Levenshtein distance, counting a swap of two neighbours as one edit.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }
}
