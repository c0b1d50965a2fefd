/// A scheme of HTTP authentication the client answers with.
public enum AuthScheme: Sendable, Equatable {
    case basic
    case digest

    /// The scheme a refusal's `WWW-Authenticate` (its challenges, joined with commas) asks for:
    /// Digest where it is among them, as it sends no password as it is; else Basic; nil for neither.
    public init?(challenges: String) {
        let names = Self.schemeNames(challenges)
        if names.contains("digest") {
            self = .digest
        } else if names.contains("basic") {
            self = .basic
        } else {
            return nil
        }
    }

    /// The schemes named in `challenges`, in lower case (RFC 9110, 11.6.1): the token that opens
    /// an element of the comma list, where it is no parameter's name (`realm="x"`); commas inside
    /// quoted strings do not part elements.
    public static func schemeNames(_ challenges: String) -> [String] {
        var elements: [Substring] = []
        var start = challenges.startIndex
        var quoted = false
        var escaped = false
        for index in challenges.indices {
            let character = challenges[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                elements.append(challenges[start..<index])
                start = challenges.index(after: index)
            }
        }
        elements.append(challenges[start...])
        return elements.compactMap { element in
            let text = element.drop { $0 == " " || $0 == "\t" }
            let token = text.prefix { $0 != " " && $0 != "\t" && $0 != "=" }
            let after = text.dropFirst(token.count).drop { $0 == " " || $0 == "\t" }
            return token.isEmpty || after.hasPrefix("=") ? nil : token.lowercased()
        }
    }
}
