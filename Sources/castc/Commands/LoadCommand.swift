import ArgumentParser
import CastClient
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
struct LoadCommand: MediaStatusCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Play media from a URL, or a file on this machine, on a device.",
        usage: GlobalOptions.usage(
            "load",
            "<url-or-file> [--content-type <type>] [--title <title>]",
            "[--stream-type <type>] [--start <position>] [--no-autoplay]",
            "[--subtitles <file-or-url> ...] [--image <url> ...]",
            "[--ad-break <ad> ...] [<other options>]"
        ),
        discussion: """
            The device fetches a URL itself, so it must be reachable from the device. A file on \
            this machine (a path, or a file:// URL) is opened by castc with your permissions and \
            handed to castd, which serves it to the device from its own address; castd never \
            opens the path. A file castc cannot open exits 66. Without a session, castd starts \
            the Default Media Receiver first. The content type is guessed from the URL's \
            extension (.mp4, .m3u8, .mp3, …), or from a file's first bytes, unless given; a \
            file's title is its tags' or its name unless --title gives one. A cover.jpg, \
            folder.jpg or front.png beside an audio file is its image unless --image gives one.

            Metadata (title, artist, poster images, …) shows on the device and in `castc \
            status`. Its kind follows from the fields given (--series: a TV show; --album: a \
            music track) unless --metadata-type says it.

            Subtitles: each --subtitles URL (WebVTT) or file (SubRip or WebVTT: castd serves it \
            as WebVTT) becomes a text track, ids 1, 2, … in order, URLs first. One \
            --subtitles-lang is the language of them all; one per --subtitles pairs them in \
            order. Without --subtitles, the subtitles beside a video file are offered: \
            Film.srt, Film.vtt, and Film.LANG.srt such as Film.en.srt or Film.pt-BR.vtt (the \
            language from the name). The first track is shown unless --no-subtitles-active. \
            Switch them later with `castc tracks`.

            Ads: each --ad-break adds a clip at a position (pre = before the content, post = \
            after it, else seconds or m:ss); clips at the same position play as one break. \
            DURATION is the clip's length and SKIPPABLE_AFTER when it can be skipped, in \
            seconds (`castc skip-ad`). POSITION:vast:URL asks an ad server (a VAST ad tag) \
            for the clip. --ad-title and --ad-poster name and picture the clips: one for all, \
            or one per --ad-break in order.

            Examples:
              castc load https://example.com/movie.mp4
              castc load ./holiday.mp4
              castc load https://example.com/live.m3u8 --stream-type live --title "News"
              castc load http://192.168.1.5:8000/song.flac --start 1:30 --no-autoplay
              castc load https://example.com/s01e02.mp4 --series "The Show" --season 1 \\
                --episode 2 --title "Pilot" --image https://example.com/poster.jpg@780x1170
              castc load https://example.com/song.mp3 --artist "Band" --album "Album" \\
                --title "Song" --duration 3:25
              castc load https://example.com/movie.mp4 --rate 1.25 \\
                --subtitles https://example.com/en.vtt --subtitles-lang en \\
                --subtitles https://example.com/de.vtt --subtitles-lang de
              castc load https://example.com/movie.mp4 \\
                --ad-break pre:https://example.com/ad1.mp4:30:5 \\
                --ad-break 10:00:https://example.com/ad2.mp4:15
              castc load https://example.com/movie.mp4 \\
                --ad-break pre:vast:https://ads.example.com/tag?sz=640x480 \\
                --ad-title "Sponsor" --ad-poster https://example.com/sponsor.jpg
              castc load https://example.com/movie.mp4 --title "The Movie" \\
                --studio "Studio" --release-date 2019-10-04
              castc load https://example.com/movie.mp4 --custom-data '{"profile":"kids"}'
            """
    )

    enum StreamType: String, ExpressibleByArgument, CaseIterable {
        case buffered, live, none

        var castd: CastdStreamType {
            switch self {
            case .buffered: return .buffered
            case .live: return .live
            case .none: return .none
            }
        }
    }

    @OptionGroup var options: GlobalOptions

    @Argument(
        help: ArgumentHelp(
            "The media's URL (http, https or another scheme the device knows), or a file on this machine.",
            valueName: "url-or-file"))
    var url: String

    @Option(
        help: ArgumentHelp(
            "The MIME type, e.g. video/mp4. Default: guessed from the URL, else castd's choice.", valueName: "type"))
    var contentType: String?

    @Option(help: ArgumentHelp("buffered (a file, the default), live (a live stream) or none.", valueName: "type"))
    var streamType: StreamType?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Where to start: seconds, m:ss or h:mm:ss.", valueName: "position"),
        transform: { try PlaybackTimeArgument.parse($0, what: "position") }
    )
    var start: Double?

    @Flag(inversion: .prefixedNo, help: "Start playing once loaded (--no-autoplay: load paused).")
    var autoplay = true

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The media's length (seconds, m:ss or h:mm:ss), if the device cannot tell.", valueName: "time"),
        transform: { try PlaybackTimeArgument.parse($0, what: "duration") }
    )
    var duration: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Playback rate, 0.5 to 2.0 (1 is normal speed).", valueName: "rate"),
        transform: PlaybackRateArgument.parse
    )
    var rate: Double?

    @OptionGroup(title: "Metadata") var metadata: MetadataOptions
    @OptionGroup(title: "Subtitles") var subtitles: SubtitleOptions

    @Option(
        name: .customLong("ad-break"),
        help: ArgumentHelp(
            "An ad clip: POSITION:CLIP_URL[:DURATION[:SKIPPABLE_AFTER]] (repeatable).", valueName: "ad"),
        transform: AdBreakArgument.parse
    )
    var adBreaks: [AdBreakArgument] = []

    @Option(
        name: .customLong("ad-title"),
        help: ArgumentHelp("The ad clips' title: one for all, or one per --ad-break in order.", valueName: "text"))
    var adTitles: [String] = []

    @Option(
        name: .customLong("ad-poster"),
        help: ArgumentHelp(
            "An image the device shows while an ad clip plays: one for all, or one per --ad-break in order.",
            valueName: "url"))
    var adPosters: [String] = []

    @Option(help: ArgumentHelp("Load credentials for the receiver app (e.g. an account token).", valueName: "token"))
    var credentials: String?

    @Option(help: ArgumentHelp("What kind of credentials --credentials are.", valueName: "type"))
    var credentialsType: String?

    @Option(help: ArgumentHelp("Custom data for the receiver app: a JSON object.", valueName: "json"))
    var customData: String?

    @Option(help: ArgumentHelp("An entity (deep link) for the app, e.g. for Cast Connect.", valueName: "entity"))
    var entity: String?

    func validate() throws {
        if !LocalFiles.isLocal(url) { try MediaURL.validate(url) }
        if let contentType { try MediaURL.validateContentType(contentType) }
        if let customData { try JSONArgument.validateObject(customData, option: "--custom-data") }
        if credentialsType != nil, credentials == nil {
            throw ValidationError("--credentials-type goes with --credentials <token>")
        }
        if let credentials, credentials.isEmpty { throw ValidationError("--credentials needs a token") }
        if let entity, entity.isEmpty { throw ValidationError("--entity needs a value") }
        for (values, option) in [(adTitles, "--ad-title"), (adPosters, "--ad-poster")] where !values.isEmpty {
            guard !adBreaks.isEmpty else { throw ValidationError("\(option) goes with --ad-break") }
            try PerItemValues.validate(values, option: option, count: adBreaks.count, items: "--ad-break")
        }
        for poster in adPosters {
            do { try MediaURL.validate(poster) } catch {
                throw ValidationError("--ad-poster '\(poster)' is not a URL: give an image's URL")
            }
        }
    }

    /// The ad clips as given, each with its title and poster.
    var adClips: [AdBreakArgument] {
        adBreaks.enumerated().map { index, argument in
            var argument = argument
            argument.title = PerItemValues.value(adTitles, at: index, count: adBreaks.count)
            argument.posterURL = PerItemValues.value(adPosters, at: index, count: adBreaks.count)
            return argument
        }
    }

    /// The media to send.
    var media: CastdMediaInformation {
        let local = LocalFiles.isLocal(url)
        var media = CastdMediaInformation(
            url: local ? "" : url,
            contentType: contentType ?? (local ? nil : MediaURL.guessContentType(url)) ?? "",
            streamType: streamType?.castd ?? .unspecified
        )
        if let metadata = metadata.metadata { media.metadata = metadata }
        if let duration { media.duration = duration }
        media.tracks = subtitles.tracks
        let (breaks, clips) = AdBreakArgument.breaks(adClips)
        media.breaks = breaks
        media.breakClips = clips
        if let entity { media.entity = entity }
        return media
    }

    func run() async throws {
        let source: MediaSource = LocalFiles.isLocal(url) ? .file(try LocalMedia.path(url)) : .url(url)
        // Subtitles given, or else those beside a video; a cover beside an audio file.
        var item = LocalFiles.items([source], companions: subtitles.sidecars)[0]
        if !subtitles.urls.isEmpty { item.subtitles = try subtitles.localFiles() }
        if !metadata.images.isEmpty { item.cover = nil }
        let status = try await LocalMedia.withHandles([item], socket: options.socket) { handles in
            var call = call()
            let added = handles[0].apply(to: &call.request.media)
            if call.request.activeTrackIds.isEmpty, subtitles.subtitlesActive, let first = added.first {
                call.request.activeTrackIds = [first]
            }
            return try await options.send(call)
        }
        try options.printMedia(status)
    }

    /// The Load call castc makes (for a local file, without the handle castd gives it).
    func call() -> CastcCall<CastdLoadRequest, CastdMediaStatus> {
        var request = CastdLoadRequest()
        request.device = options.deviceSelector
        request.media = media
        request.autoplay = autoplay
        request.startTime = start ?? 0
        request.playbackRate = rate ?? 0
        request.activeTrackIds = subtitles.activeTrackIDs
        request.credentials = credentials ?? ""
        request.credentialsType = credentialsType ?? ""
        request.customDataJson = customData ?? ""
        return CastcCall(CastdMethods.load, request)
    }
}

/// `castc load`'s metadata options.
struct MetadataOptions: ParsableArguments {
    @Option(help: ArgumentHelp("What the media is. Default: from the fields given.", valueName: "type"))
    var metadataType: MetadataTypeArgument?

    @Option(help: "A title to show on the device and in `castc status`.")
    var title: String?

    @Option(
        help: ArgumentHelp("A second line under the title (not the subtitles: see --subtitles).", valueName: "text"))
    var subtitle: String?

    @Option(help: ArgumentHelp("The artist (music, photo).", valueName: "name"))
    var artist: String?

    @Option(help: ArgumentHelp("The album (music).", valueName: "name"))
    var album: String?

    @Option(help: ArgumentHelp("The album's artist (music).", valueName: "name"))
    var albumArtist: String?

    @Option(help: ArgumentHelp("The studio (movie).", valueName: "name"))
    var studio: String?

    @Option(
        help: ArgumentHelp(
            "When it was released: an ISO 8601 date, such as 2019 or 2019-10-04 (not TV shows).", valueName: "date"))
    var releaseDate: String?

    @Option(help: ArgumentHelp("The series' title (TV show).", valueName: "title"))
    var series: String?

    @Option(
        parsing: .unconditional, help: ArgumentHelp("The season number (TV show), 0 or more.", valueName: "n"),
        transform: { try WholeNumberArgument.parse($0, option: "--season") })
    var season: UInt32?

    @Option(
        parsing: .unconditional, help: ArgumentHelp("The episode number (TV show), 0 or more.", valueName: "n"),
        transform: { try WholeNumberArgument.parse($0, option: "--episode") })
    var episode: UInt32?

    @Option(
        name: .customLong("image"),
        help: ArgumentHelp("A poster or cover: URL or URL@WIDTHxHEIGHT (repeatable).", valueName: "url"),
        transform: ImageArgument.parse
    )
    var images: [CastdImage] = []

    /// The metadata type the fields imply, when --metadata-type does not say.
    var impliedType: MetadataTypeArgument {
        if series != nil || season != nil || episode != nil { return .tv }
        if album != nil || albumArtist != nil || artist != nil { return .music }
        if studio != nil { return .movie }
        return .generic
    }

    func validate() throws {
        if let releaseDate, !Self.isISODate(releaseDate) {
            throw ValidationError(
                "--release-date '\(releaseDate)' is not an ISO 8601 date: give one such as 2019, 2019-10 or 2019-10-04")
        }
        if releaseDate != nil, series != nil || season != nil || episode != nil || metadataType == .tv {
            throw ValidationError(
                "--release-date is not a field of TV shows (the Cast SDK has none for them); leave it out")
        }
        guard let type = metadataType else { return }
        func check(_ given: Bool, _ flags: String, allowed: [MetadataTypeArgument]) throws {
            guard given, !allowed.contains(type) else { return }
            let names = allowed.map(\.rawValue).joined(separator: " or ")
            throw ValidationError(
                "\(flags) describe\(flags.contains(",") ? "" : "s") \(names) media, not \(type.rawValue): use --metadata-type \(names), or leave --metadata-type out"
            )
        }
        try check(series != nil, "--series", allowed: [.tv])
        try check(season != nil, "--season", allowed: [.tv])
        try check(episode != nil, "--episode", allowed: [.tv])
        try check(album != nil, "--album", allowed: [.music])
        try check(albumArtist != nil, "--album-artist", allowed: [.music])
        try check(artist != nil, "--artist", allowed: [.music, .photo])
        try check(studio != nil, "--studio", allowed: [.movie])
        try check(releaseDate != nil, "--release-date", allowed: [.generic, .movie, .music])
    }

    /// An ISO 8601 date, possibly with a time: YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mm….
    static func isISODate(_ text: String) -> Bool {
        let date = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = date.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts[0].count == 4,
            parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }),
            parts.dropFirst().allSatisfy({ $0.count == 2 })
        else { return false }
        if parts.count > 1, !(1...12).contains(Int(parts[1]) ?? 0) { return false }
        if parts.count > 2, !(1...31).contains(Int(parts[2]) ?? 0) { return false }
        let time = text.dropFirst(date.count)
        return time.isEmpty
            || (parts.count == 3 && time.count > 1
                && time.dropFirst().allSatisfy { $0.isASCIIDigit || ":.+-Z".contains($0) })
    }

    /// The metadata to send, or nil if no option gave any.
    var metadata: CastdMediaMetadata? {
        let given: [Any?] = [
            metadataType, title, subtitle, artist, album, albumArtist, series, season, episode, studio, releaseDate,
        ]
        guard given.contains(where: { $0 != nil }) || !images.isEmpty else { return nil }
        var metadata = CastdMediaMetadata()
        metadata.metadataType = (metadataType ?? impliedType).castd
        if let title { metadata.title = title }
        if let subtitle { metadata.subtitle = subtitle }
        if let artist { metadata.artist = artist }
        if let album { metadata.albumName = album }
        if let albumArtist { metadata.albumArtist = albumArtist }
        if let series { metadata.seriesTitle = series }
        if let season { metadata.season = season }
        if let episode { metadata.episode = episode }
        if let studio { metadata.studio = studio }
        if let releaseDate { metadata.releaseDate = releaseDate }
        metadata.images = images
        return metadata
    }
}

/// `castc load`'s subtitles options.
struct SubtitleOptions: ParsableArguments {
    @Option(
        name: .customLong("subtitles"),
        help: ArgumentHelp(
            "Subtitles: a file here (SubRip .srt or WebVTT .vtt) or the URL of a WebVTT file (repeatable).",
            valueName: "file|url"),
        transform: { text in
            if LocalFiles.isLocal(text) { return text }
            do { try MediaURL.validate(text) } catch {
                throw ValidationError("--subtitles '\(text)' is not a URL: give a file or the URL of a WebVTT file")
            }
            return text
        }
    )
    var urls: [String] = []

    @Flag(
        inversion: .prefixedNo,
        help: "Offer the subtitles beside a video file (movie.srt, movie.en.vtt) when --subtitles gives none.")
    var sidecarSubtitles = true

    /// Whether to look beside the file for subtitles.
    var sidecars: Bool { sidecarSubtitles && urls.isEmpty }

    @Option(
        name: .customLong("subtitles-lang"),
        help: ArgumentHelp(
            "The language (BCP-47: en, pt-BR) of every --subtitles, or, repeated, of each in order.",
            valueName: "lang"))
    var languages: [String] = []

    @Flag(inversion: .prefixedNo, help: "Show the first subtitles track at once.")
    var subtitlesActive = true

    func validate() throws {
        guard !languages.isEmpty else { return }
        guard !urls.isEmpty else { throw ValidationError("--subtitles-lang goes with --subtitles <url>") }
        guard languages.count == 1 || languages.count == urls.count else {
            throw ValidationError(
                "\(languages.count) --subtitles-lang for \(urls.count) --subtitles: give one language for all, or one for each"
            )
        }
        for language in languages {
            let valid =
                !language.isEmpty && language.first != "-" && language.last != "-"
                && language.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" }
            guard valid else {
                throw ValidationError("'\(language)' is not a language tag: give one such as en, de or pt-BR")
            }
        }
    }

    /// The language of the track at `index`: its own, the one for all, or none.
    func language(at index: Int) -> String {
        languages.count == urls.count ? languages[index] : languages.first ?? ""
    }

    /// The --subtitles files on this machine, each with its language.
    func localFiles() throws(CastcExit) -> [LocalSubtitles] {
        var files: [LocalSubtitles] = []
        for (index, text) in urls.enumerated() where LocalFiles.isLocal(text) {
            files.append(LocalSubtitles(path: try LocalMedia.path(text), language: language(at: index)))
        }
        return files
    }

    /// One text track per URL, ids 1, 2, … (the files' tracks follow once castd has them).
    var tracks: [CastdMediaTrack] {
        urls.indices.filter { !LocalFiles.isLocal(urls[$0]) }.enumerated().map { id, index in
            let url = urls[index]
            return CastdMediaTrack(
                subtitlesID: Int64(id + 1),
                url: url,
                language: language(at: index),
                name: URL(string: url)?.lastPathComponent ?? "",
                contentType: MediaURL.guessContentType(url) ?? "text/vtt"
            )
        }
    }

    /// The tracks to show at once: the first, unless --no-subtitles-active.
    var activeTrackIDs: [Int64] { subtitlesActive && urls.contains { !LocalFiles.isLocal($0) } ? [1] : [] }
}
