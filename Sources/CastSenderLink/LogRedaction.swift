import Foundation

/// What of a value from a client or a device castd may write to its log. castd's log is read
/// by every user who may read castd's state (StreamLogs) and by the journal; what a media URL
/// carries beyond its path — a signed query, a token in a fragment, a user and password — is a
/// secret of whoever loaded it. Credentials and customData are never logged at all.
public enum LogRedaction {
    /// A URL's scheme, host, port and path; the rest is dropped and said to be. Anything that is
    /// not a URL with a host (a custom receiver's opaque content id) is shown by its length only.
    public static func url(_ text: String) -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme,
            let host = components.host, !host.isEmpty
        else {
            return text.isEmpty ? "" : "(not a URL: \(text.utf8.count) bytes)"
        }
        var shown = "\(scheme)://\(host)"
        if let port = components.port { shown += ":\(port)" }
        shown += components.percentEncodedPath
        var dropped: [String] = []
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil { dropped.append("user") }
        if components.percentEncodedQuery != nil { dropped.append("query") }
        if components.percentEncodedFragment != nil { dropped.append("fragment") }
        if !dropped.isEmpty { shown += " (\(dropped.joined(separator: ", ")) not logged)" }
        return shown
    }
}
