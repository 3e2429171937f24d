import CastProtocol

extension EmulatorApp {
    /// Parses `ID:NAME:NAMESPACE[,NAMESPACE…]` (the `--app` flag) into an app that echoes on
    /// its custom namespaces, and has the media player when it lists
    /// `urn:x-cast:com.google.cast.media`.
    ///
    /// The id is letters, digits, `.`, `_` or `-` (real ids are 8 hex digits, but not all are);
    /// the name must not contain `:`; each namespace starts with `urn:x-cast:`. Namespaces
    /// contain colons themselves, so everything after the second `:` is the namespace list.
    public init(parsing value: String) throws(EmulatorError) {
        let example = "ABCD1234:My app:urn:x-cast:com.example.chat"
        func invalid(_ why: String) -> EmulatorError {
            EmulatorError(
                .invalidArgument, "an app is ID:NAME:NAMESPACE[,NAMESPACE…], like \(example); \(why) in “\(value)”")
        }
        let parts = value.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { throw invalid("ID, NAME and at least one NAMESPACE are needed") }
        let (id, name, list) = (parts[0], parts[1], parts[2])
        let idCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        guard !id.isEmpty, id.count <= 64, id.allSatisfy(idCharacters.contains) else {
            throw invalid("the ID must be 1 to 64 letters, digits, “.”, “_” or “-”")
        }
        guard !name.allSatisfy(\.isWhitespace) else { throw invalid("the NAME is empty") }
        var namespaces: [String] = []
        for namespace in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard namespace.hasPrefix("urn:x-cast:"), namespace.count > "urn:x-cast:".count,
                !namespace.contains(where: \.isWhitespace)
            else {
                throw invalid("“\(namespace)” is not a namespace (urn:x-cast:…)")
            }
            if !namespaces.contains(namespace) { namespaces.append(namespace) }
        }
        self.init(appID: id, displayName: name, namespaces: namespaces, echoes: true)
    }
}
