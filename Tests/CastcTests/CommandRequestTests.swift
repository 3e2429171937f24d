import CastTestSupport
import ArgumentParser
import CastClient
import Foundation
import Testing

@testable import castc

/// The request each command sends, field by field, and the usage errors for bad values.
@Suite(.tags(.cpuBound)) struct LoadRequestTests {
    @Test func everyLoadOption() throws {
        let command = try parse(
            [
                "load", "https://example.com/s01e02.mp4", "--device", "TV", "--content-type", "video/mp4",
                "--stream-type", "buffered", "--start", "1:30", "--no-autoplay", "--duration", "42:10", "--rate",
                "1.25",
                "--series", "The Show", "--season", "1", "--episode", "2", "--title", "Pilot", "--subtitle",
                "Where it starts",
                "--image", "https://example.com/poster.jpg@780x1170", "--image", "https://example.com/still.jpg",
                "--subtitles", "https://example.com/en.vtt", "--subtitles", "https://example.com/en-sdh.vtt",
                "--subtitles-lang", "en", "--credentials", "tok3n", "--credentials-type", "oauth",
                "--custom-data", #"{"profile":"kids"}"#, "--entity", "https://example.com/watch/s01e02",
                "--ad-break", "pre:https://ads.example.com/a.mp4:30:5",
                "--ad-break", "pre:https://ads.example.com/b.mp4:15",
                "--ad-break", "10:00:https://ads.example.com/c.mp4",
                "--ad-break", "post:http://ads.example.com:8080/d.mp4:20:0",
            ],
            as: LoadCommand.self
        )
        let call = command.call()
        #expect(call.method == .load)
        let request = call.request
        #expect(request.device == "TV")
        #expect(request.hasAutoplay && request.autoplay == false)
        #expect(request.startTime == 90)
        #expect(request.playbackRate == 1.25)
        #expect(request.activeTrackIds == [1])
        #expect(request.credentials == "tok3n")
        #expect(request.credentialsType == "oauth")
        #expect(request.customDataJson == #"{"profile":"kids"}"#)

        let media = request.media
        #expect(media.contentID == "https://example.com/s01e02.mp4")
        #expect(media.contentURL == "https://example.com/s01e02.mp4")
        #expect(media.contentType == "video/mp4")
        #expect(media.streamType == .buffered)
        #expect(media.duration == 2530)
        #expect(media.entity == "https://example.com/watch/s01e02")

        let metadata = media.metadata
        #expect(metadata.metadataType == .tvShow)  // implied by --series
        #expect(metadata.title == "Pilot")
        #expect(metadata.subtitle == "Where it starts")
        #expect(metadata.seriesTitle == "The Show")
        #expect(metadata.season == 1)
        #expect(metadata.episode == 2)
        #expect(metadata.images.map(\.url) == ["https://example.com/poster.jpg", "https://example.com/still.jpg"])
        #expect(metadata.images.map(\.width) == [780, 0])
        #expect(metadata.images.map(\.height) == [1170, 0])

        #expect(media.tracks.map(\.trackID) == [1, 2])
        for track in media.tracks {
            #expect(track.type == .text)
            #expect(track.subtype == .subtitles)
            #expect(track.language == "en")
            #expect(track.contentType == "text/vtt")
        }
        #expect(media.tracks.map(\.contentID) == ["https://example.com/en.vtt", "https://example.com/en-sdh.vtt"])
        #expect(media.tracks.map(\.name) == ["en.vtt", "en-sdh.vtt"])

        // Two pre-roll clips make one break; breaks by position, the post-roll last.
        #expect(media.breaks.map(\.id) == ["break-1", "break-2", "break-3"])
        #expect(media.breaks.map(\.position) == [0, 600, -1])
        #expect(media.breaks.map(\.breakClipIds) == [["clip-1", "clip-2"], ["clip-3"], ["clip-4"]])
        #expect(media.breaks[0].duration == 45)
        #expect(media.breaks[1].duration == 0)  // a clip of unknown length: the break's is unknown
        #expect(media.breaks[2].duration == 20)
        #expect(media.breakClips.map(\.id) == ["clip-1", "clip-2", "clip-3", "clip-4"])
        #expect(
            media.breakClips.map(\.contentID) == [
                "https://ads.example.com/a.mp4", "https://ads.example.com/b.mp4", "https://ads.example.com/c.mp4",
                "http://ads.example.com:8080/d.mp4",
            ])
        #expect(media.breakClips.map(\.contentURL) == media.breakClips.map(\.contentID))
        #expect(media.breakClips.map(\.contentType) == Array(repeating: "video/mp4", count: 4))
        #expect(media.breakClips.map(\.duration) == [30, 15, 0, 20])
        #expect(media.breakClips.map(\.hasWhenSkippable) == [true, false, false, true])
        #expect(media.breakClips[0].whenSkippable == 5)
        #expect(media.breakClips[3].whenSkippable == 0)
    }

    @Test func plainLoadSendsOnlyWhatWasGiven() throws {
        let request = try parse(["load", "https://example.com/a.mp3"], as: LoadCommand.self).call().request
        #expect(request.device == "")
        #expect(request.hasAutoplay && request.autoplay)
        #expect(request.startTime == 0)
        #expect(request.playbackRate == 0)
        #expect(request.activeTrackIds.isEmpty)
        #expect(request.credentials.isEmpty && request.credentialsType.isEmpty && request.customDataJson.isEmpty)
        #expect(request.media.contentType == "audio/mpeg")
        #expect(!request.media.hasMetadata)
        #expect(request.media.tracks.isEmpty && request.media.breaks.isEmpty && request.media.breakClips.isEmpty)
        #expect(request.media.duration == 0 && request.media.entity.isEmpty)
    }

    @Test func metadataTypeIsImpliedOrGiven() throws {
        func metadata(_ arguments: [String]) throws -> CastdMediaMetadata {
            try parse(["load", "https://example.com/a.mp3"] + arguments, as: LoadCommand.self).media.metadata
        }
        let music = try metadata([
            "--artist", "Band", "--album", "Album", "--album-artist", "Various", "--title", "Song",
        ])
        #expect(music.metadataType == .musicTrack)
        #expect(music.artist == "Band" && music.albumName == "Album" && music.albumArtist == "Various")
        #expect(try metadata(["--title", "A"]).metadataType == .generic)
        #expect(try metadata(["--metadata-type", "movie", "--title", "A"]).metadataType == .movie)
        #expect(try metadata(["--metadata-type", "photo", "--artist", "Me"]).metadataType == .photo)
        #expect(try metadata(["--metadata-type", "generic"]).metadataType == .generic)
        #expect(try metadata(["--image", "https://x.org/cover.png"]).images.count == 1)
        #expect(try metadata(["--metadata-type", "tv", "--series", "S"]).metadataType == .tvShow)
        #expect(try metadata(["--metadata-type", "music"]).metadataType == .musicTrack)
    }

    @Test func subtitlesCanStayOff() throws {
        let request = try parse(
            ["load", "https://x.org/m.mp4", "--subtitles", "https://x.org/de.vtt", "--no-subtitles-active"],
            as: LoadCommand.self
        ).call().request
        #expect(request.media.tracks.count == 1)
        #expect(request.media.tracks[0].language == "")
        #expect(request.activeTrackIds.isEmpty)
    }

    @Test func imageSizesAndURLsWithAt() throws {
        #expect(try ImageArgument.parse("https://x.org/a.jpg@1280x720").width == 1280)
        let userinfo = try ImageArgument.parse("https://me@x.org/a.jpg")
        #expect(userinfo.url == "https://me@x.org/a.jpg" && userinfo.width == 0)
    }

    @Test func adBreakForms() throws {
        #expect(
            try AdBreakArgument.parse("0:https://a.org/x.mp4")
                == AdBreakArgument(position: 0, url: "https://a.org/x.mp4"))
        #expect(
            try AdBreakArgument.parse("1:30:https://a.org/x.mp4:12.5")
                == AdBreakArgument(position: 90, url: "https://a.org/x.mp4", duration: 12.5))
        #expect(
            try AdBreakArgument.parse("end:https://a.org/x.mp4:20:5")
                == AdBreakArgument(position: -1, url: "https://a.org/x.mp4", duration: 20, skippableAfter: 5))
        // A port is part of the URL, not a duration.
        #expect(
            try AdBreakArgument.parse("pre:http://a.org:8000")
                == AdBreakArgument(position: 0, url: "http://a.org:8000"))
    }

    @Test func eachSubtitlesTrackCanHaveItsOwnLanguage() throws {
        let command = try parse(
            [
                "load", "https://example.com/film.mp4", "--subtitles", "https://example.com/en.vtt",
                "--subtitles-lang", "en", "--subtitles", "https://example.com/pt.vtt", "--subtitles-lang", "pt-BR",
            ],
            as: LoadCommand.self)
        let tracks = command.call().request.media.tracks
        #expect(tracks.map(\.trackID) == [1, 2])
        #expect(tracks.map(\.contentID) == ["https://example.com/en.vtt", "https://example.com/pt.vtt"])
        #expect(tracks.map(\.language) == ["en", "pt-BR"])
        // Without a language, the tracks have none.
        let unlabelled = try parse(
            ["load", "https://example.com/film.mp4", "--subtitles", "https://example.com/a.vtt"], as: LoadCommand.self)
        #expect(unlabelled.call().request.media.tracks.map(\.language) == [""])
    }

    @Test func badLoadValuesAreUsageErrorsThatSayWhatIsAllowed() {
        let url = "https://x.org/a.mp4"
        #expect(usageError(["load", url, "--stream-type", "vod"]).contains("buffered"))
        #expect(usageError(["load", url, "--metadata-type", "film"]).contains("movie"))
        #expect(usageError(["load", url, "--custom-data", "{not json"]).contains("--custom-data is not JSON"))
        #expect(usageError(["load", url, "--custom-data", "[1,2]"]).contains("must be a JSON object"))
        #expect(usageError(["load", url, "--rate", "3"]).contains("give 0.5 to 2.0"))
        #expect(usageError(["load", url, "--rate", "fast"]).contains("is not a playback rate"))
        #expect(usageError(["load", url, "--duration", "long"]).contains("is not a duration"))
        #expect(usageError(["load", url, "--image", "poster.jpg"]).contains("URL@WIDTHxHEIGHT"))
        #expect(usageError(["load", url, "--image", "https://x.org/a.jpg@0x720"]).contains("not a size"))
        #expect(
            usageError(["load", url, "--subtitles", "https://x.org/a b.vtt"]).contains(
                "give a file or the URL of a WebVTT file"))
        #expect(usageError(["load", url, "--subtitles-lang", "en"]).contains("goes with --subtitles"))
        #expect(
            usageError([
                "load", url, "--subtitles", "https://x.org/a.vtt", "--subtitles", "https://x.org/b.vtt",
                "--subtitles", "https://x.org/c.vtt", "--subtitles-lang", "en", "--subtitles-lang", "de",
            ]).contains("2 --subtitles-lang for 3 --subtitles: give one language for all, or one for each"))
        #expect(
            usageError(["load", url, "--subtitles", "https://x.org/a.vtt", "--subtitles-lang", "e n"])
                .contains("not a language tag"))
        #expect(usageError(["load", url, "--credentials-type", "oauth"]).contains("goes with --credentials"))
        #expect(usageError(["load", url, "--series", "S", "--metadata-type", "movie"]).contains("--metadata-type tv"))
        #expect(usageError(["load", url, "--album", "A", "--metadata-type", "tv"]).contains("--metadata-type music"))
        #expect(usageError(["load", url, "--artist", "A", "--metadata-type", "movie"]).contains("music or photo"))
        #expect(usageError(["load", url, "--season", "one"]).contains("--season"))
        #expect(usageError(["load", url, "--ad-break", "https://ads.org/a.mp4"]).contains("POSITION:CLIP_URL"))
        #expect(
            usageError(["load", url, "--ad-break", "soon:https://ads.org/a.mp4"]).contains("'soon' is not a position"))
        #expect(usageError(["load", url, "--ad-break", "pre:notaurl"]).contains("no clip URL"))
        #expect(
            usageError(["load", url, "--ad-break", "pre:https://a.org/x.mp4:10:20"]).contains("after the clip's end"))
        #expect(usageError(["load", url, "--entity", ""]).contains("--entity"))
        #expect(usageError(["load", url, "--release-date", "4 Oct 2019"]).contains("such as 2019, 2019-10"))
        #expect(usageError(["load", url, "--release-date", "2019-13"]).contains("not an ISO 8601 date"))
        #expect(usageError(["load", url, "--series", "S", "--release-date", "2019"]).contains("not a field of TV"))
        #expect(
            usageError(["load", url, "--studio", "S", "--metadata-type", "music"]).contains("--metadata-type movie"))
        #expect(usageError(["load", url, "--ad-title", "A"]).contains("--ad-title goes with --ad-break"))
        let twoAds = ["--ad-break", "pre:https://a.org/1.mp4", "--ad-break", "post:https://a.org/2.mp4"]
        #expect(
            usageError(["load", url] + twoAds + ["--ad-title", "A", "--ad-title", "B", "--ad-title", "C"])
                .contains("3 --ad-title for 2 --ad-break: give one for all, or one for each"))
        #expect(usageError(["load", url] + twoAds + ["--ad-poster", "poster.jpg"]).contains("--ad-poster"))
        #expect(usageError(["load", url, "--ad-break", "pre:vast:notaurl"]).contains("no clip URL"))
    }

    @Test func studioAndReleaseDateMakeAMovie() throws {
        let metadata = try parse(
            ["load", "https://x.org/m.mp4", "--studio", "Studio", "--release-date", "2019-10-04"], as: LoadCommand.self
        ).media.metadata
        #expect(metadata.metadataType == .movie && metadata.studio == "Studio" && metadata.releaseDate == "2019-10-04")
        for date in ["2019", "2019-10", "2019-10-04T20:00:00Z", "2019-10-04T20:00+02:00"] {
            #expect(MetadataOptions.isISODate(date), "\(date)")
        }
        for date in ["19", "2019-1", "2019-10-4", "2019-00", "2019-10-32", "2019T10", "2019-10-04T", "x019"] {
            #expect(!MetadataOptions.isISODate(date), "\(date)")
        }
    }

    @Test func adClipsWithTitlesPostersAndAVASTRequest() throws {
        let media = try parse(
            [
                "load", "https://x.org/m.mp4",
                "--ad-break", "pre:vast:https://ads.example.com/tag?sz=640x480&t=1:15",
                "--ad-break", "pre:https://ads.example.com/b.mp4:15:5",
                "--ad-title", "Sponsor", "--ad-title", "Brand",
                "--ad-poster", "https://example.com/p.jpg",
            ],
            as: LoadCommand.self
        ).media
        #expect(media.breakClips.count == 2)
        let vast = media.breakClips[0]
        #expect(vast.hasVastAdsRequest && vast.vastAdsRequest.adTagURL == "https://ads.example.com/tag?sz=640x480&t=1")
        #expect(vast.duration == 15)  // ":15" at the end is the clip's duration, as for any clip
        #expect(vast.contentID.isEmpty && vast.contentURL.isEmpty)
        #expect(vast.title == "Sponsor" && vast.posterURL == "https://example.com/p.jpg")
        let clip = media.breakClips[1]
        #expect(!clip.hasVastAdsRequest && clip.contentURL == "https://ads.example.com/b.mp4")
        #expect(clip.title == "Brand" && clip.posterURL == "https://example.com/p.jpg" && clip.whenSkippable == 5)
    }
}

@Suite(.tags(.cpuBound)) struct QueueRequestTests {
    @Test func queueLoad() throws {
        let call = try parse(
            [
                "queue", "load", "https://x.org/a.mp3", "https://x.org/b.mp4", "https://x.org/c", "--start-item", "2",
                "--repeat", "shuffle", "--start", "0:30", "--device", "Kitchen",
            ],
            as: QueueLoadCommand.self
        ).call()
        #expect(call.method == .queueLoad)
        let request = call.request
        #expect(request.device == "Kitchen")
        #expect(
            request.items.map(\.media.contentID) == ["https://x.org/a.mp3", "https://x.org/b.mp4", "https://x.org/c"])
        #expect(request.items.map(\.media.contentType) == ["audio/mpeg", "video/mp4", ""])
        #expect(request.items.allSatisfy { $0.itemID == 0 && !$0.hasAutoplay })
        #expect(request.startIndex == 1)
        #expect(request.repeatMode == .allAndShuffle)
        #expect(request.startTime == 30)

        let plain = try parse(["queue", "load", "https://x.org/a.mp3"], as: QueueLoadCommand.self).call().request
        #expect(plain.startIndex == 0 && plain.repeatMode == .off && plain.startTime == 0)
        // Scripts written before --start-item count from 0, as castd.v1 does.
        let old = try parse(
            ["queue", "load", "https://x.org/a.mp3", "https://x.org/b.mp3", "--start-index", "1"],
            as: QueueLoadCommand.self
        ).call().request
        #expect(old.startIndex == 1)
    }

    @Test func eachItemsAutoplayStartAndPreload() throws {
        let load = try parse(
            [
                "queue", "load", "https://x.org/a.mp3", "https://x.org/b.mp3", "https://x.org/c.mp3",
                "--item-autoplay", "on", "--item-autoplay", "off", "--item-autoplay", "on",
                "--item-start", "0", "--item-start", "1:30", "--item-start", "5", "--item-preload", "20",
            ],
            as: QueueLoadCommand.self
        ).call().request
        #expect(load.items.map(\.hasAutoplay) == [true, true, true])
        #expect(load.items.map(\.autoplay) == [true, false, true])
        #expect(load.items.map(\.startTime) == [0, 90, 5])
        #expect(load.items.map(\.preloadTime) == [20, 20, 20])

        let add = try parse(
            ["queue", "add", "https://x.org/d.mp3", "--item-start", "2:00", "--item-autoplay", "off"],
            as: QueueAddCommand.self
        ).call(ids: []).request
        #expect(add.items.first?.startTime == 120 && add.items.first?.autoplay == false)
        #expect(add.items.first?.preloadTime == 0)

        let two = ["queue", "load", "https://x.org/a.mp3", "https://x.org/b.mp3"]
        #expect(
            usageError(two + ["--item-start", "1", "--item-start", "2", "--item-start", "3"])
                .contains("3 --item-start for 2 URLs: give one for all, or one for each, in order"))
        #expect(usageError(two + ["--item-preload=-1"]).contains("is not a number of seconds"))
        #expect(usageError(two + ["--item-preload", "soon"]).contains("is not a number of seconds"))
        #expect(usageError(two + ["--item-autoplay", "maybe"]).contains("one of 'on' and 'off'"))
    }

    @Test func repeatModes() throws {
        for (name, mode) in [
            ("off", CastdRepeatMode.off), ("all", .all), ("one", .single), ("shuffle", .allAndShuffle),
        ] {
            let call = try parse(["queue", "repeat", name], as: QueueRepeatCommand.self).call()
            #expect(call.method == .queueUpdate)
            #expect(call.request.hasRepeatMode && call.request.repeatMode == mode, "\(name)")
            #expect(call.request.jump == 0 && call.request.currentItemID == 0)
        }
    }

    @Test func addRemoveMoveJumpNextPrev() throws {
        let add = try parse(
            ["queue", "add", "https://x.org/c.mp3", "https://x.org/d.mp3", "--before", "2", "--play-now"],
            as: QueueAddCommand.self)
        #expect(add.itemRefs == [.position(2)])
        let insert = add.call(ids: [26])
        #expect(insert.method == .queueInsert)
        #expect(insert.request.items.map(\.media.contentID) == ["https://x.org/c.mp3", "https://x.org/d.mp3"])
        #expect(insert.request.insertBeforeItemID == 26)
        #expect(insert.request.playNow)
        let append = try parse(["queue", "add", "https://x.org/c.mp3"], as: QueueAddCommand.self)
        #expect(append.itemRefs.isEmpty)
        #expect(append.call(ids: []).request.insertBeforeItemID == 0 && !append.call(ids: []).request.playNow)

        let remove = try parse(["queue", "remove", "3", "#40"], as: QueueRemoveCommand.self)
        #expect(remove.itemRefs == [.position(3), .id(40)])
        #expect(remove.call(ids: [27, 40]).method == .queueRemove)
        #expect(remove.call(ids: [27, 40]).request.itemIds == [27, 40])

        let move = try parse(["queue", "move", "5", "4", "--before", "1"], as: QueueMoveCommand.self)
        #expect(move.itemRefs == [.position(5), .position(4), .position(1)])
        let reorder = move.call(ids: [29, 28, 25])
        #expect(reorder.method == .queueReorder)
        #expect(reorder.request.itemIds == [29, 28] && reorder.request.insertBeforeItemID == 25)
        let toEnd = try parse(["queue", "move", "2", "--to-end"], as: QueueMoveCommand.self).call(ids: [26])
        #expect(toEnd.request.itemIds == [26] && toEnd.request.insertBeforeItemID == 0)

        let jump = try parse(["queue", "jump", "3", "--start", "1:00"], as: QueueJumpCommand.self)
        #expect(jump.itemRefs == [.position(3)])
        let update = jump.call(ids: [27])
        #expect(update.method == .queueUpdate)
        #expect(update.request.currentItemID == 27 && update.request.currentTime == 60)
        #expect(update.request.jump == 0 && !update.request.hasRepeatMode)

        let next = try parse(["queue", "next"], as: QueueNextCommand.self).call()
        #expect(next.method == .queueUpdate && next.request.jump == 1 && !next.request.hasRepeatMode)
        let previous = try parse(["queue", "prev"], as: QueuePrevCommand.self).call()
        #expect(previous.request.jump == -1)
        #expect(try parse(["queue", "previous"], as: QueuePrevCommand.self).call().request.jump == -1)

        let list = try parse(["queue", "--device", "TV"], as: QueueListCommand.self).call()
        #expect(list.method == .requestMediaStatus && list.request.device == "TV")
    }

    @Test func badQueueArgumentsAreUsageErrors() {
        #expect(usageError(["queue", "load"]).contains("give the URLs"))
        #expect(usageError(["queue", "load", "https://"]).contains("has no host"))
        #expect(usageError(["queue", "load", "https://x.org/a", "--start-index", "1"]).contains("give 0 to 0"))
        #expect(usageError(["queue", "load", "https://x.org/a", "--start-item", "2"]).contains("give 1 to 1"))
        #expect(usageError(["queue", "load", "https://x.org/a", "--repeat", "forever"]).contains("shuffle"))
        #expect(usageError(["queue", "repeat", "twice"]).contains("'off', 'all', 'one'"))
        #expect(usageError(["queue", "add"]).contains("give the URLs"))
        #expect(
            usageError(["queue", "add", "https://x.org/a", "--before", "first"]).contains("is not a queue position"))
        #expect(usageError(["queue", "remove"]).contains("as castc queue shows them"))
        #expect(
            usageError(["queue", "remove", "0"]).contains("'0' is not a queue position: give 1 for the first item"))
        #expect(usageError(["queue", "remove", "#x"]).contains("'#x' is not an item id"))
        _ = usageError(["queue", "remove", "-3"])
        #expect(usageError(["queue", "move", "2"]).contains("--before <item> or --to-end"))
        #expect(usageError(["queue", "move", "2", "--before", "1", "--to-end"]).contains("not both"))
        #expect(usageError(["queue", "move", "2", "--before", "2"]).contains("before itself"))
        #expect(usageError(["queue", "jump"]).contains("<item>"))
        #expect(usageError(["queue", "jump", "x"]).contains("is not a queue position"))
    }

    /// A position is looked up in the whole queue's order; past its end, OUT_OF_RANGE.
    @Test func positionsAreLookedUpInTheQueue() throws {
        let order: [Int64] = [25, 26, 27]
        #expect(try QueueItemRef.position(1).itemID(in: order) == 25)
        #expect(try QueueItemRef.position(3).itemID(in: order) == 27)
        #expect(try QueueItemRef.id(99).itemID(in: order) == 99, "an id is the device's to judge")
        #expect(throws: CastdError(.outOfRange, "the queue has 3 items: give 1 to 3, not 4")) {
            try QueueItemRef.position(4).itemID(in: order)
        }
        #expect(throws: CastdError(.outOfRange, "the queue is empty: there is no item 1")) {
            try QueueItemRef.position(1).itemID(in: [])
        }
    }
}

@Suite(.tags(.cpuBound)) struct PlaybackRequestTests {
    @Test func rate() throws {
        let call = try parse(["rate", "1.5"], as: RateCommand.self).call()
        #expect(call.method == .setPlaybackRate)
        #expect(call.request.rate == 1.5)
        #expect(try parse(["rate", "0.5x"], as: RateCommand.self).rate == 0.5)
        #expect(try parse(["rate", "2"], as: RateCommand.self).rate == 2)
        for bad in ["0.25", "2.5", "3", "0"] {
            #expect(usageError(["rate", bad]).contains("out of range: give 0.5 to 2.0"), "\(bad)")
        }
        #expect(usageError(["rate", "fast"]).contains("is not a playback rate"))
        #expect(usageError(["rate"]).contains("rate"))
    }

    @Test func skipAd() throws {
        let call = try parse(["skip-ad", "--device", "TV"], as: SkipAdCommand.self).call()
        #expect(call.method == .skipAd)
        #expect(call.request.device == "TV")
    }
}

@Suite(.tags(.cpuBound)) struct TracksRequestTests {
    func track(_ id: Int64, _ type: CastdTrackType, language: String = "") -> CastdMediaTrack {
        var track = CastdMediaTrack()
        track.trackID = id
        track.type = type
        track.language = language
        if type == .text { track.subtype = .subtitles }
        return track
    }

    var status: CastdMediaStatus {
        var status = CastdMediaStatus()
        status.media.tracks = [
            track(1, .text, language: "en"), track(2, .text, language: "de"), track(3, .audio, language: "en"),
            track(4, .audio, language: "de"), track(5, .video),
        ]
        status.activeTrackIds = [1, 3, 5]
        return status
    }

    @Test func enablingReplacesTheActiveTrackOfItsKind() throws {
        let call = try parse(["tracks", "enable", "2", "--device", "TV"], as: TracksEnableCommand.self).call(
            current: status)
        #expect(call.method == .editTracks)
        #expect(call.request.device == "TV")
        #expect(call.request.hasActiveTracks && call.request.activeTracks.trackIds == [3, 5, 2])
        #expect(!call.request.hasTextTrackStyle)
        let audio = try parse(["tracks", "enable", "4"], as: TracksEnableCommand.self).call(current: status)
        #expect(audio.request.activeTracks.trackIds == [1, 5, 4])
        let same = try parse(["tracks", "enable", "1"], as: TracksEnableCommand.self).call(current: status)
        #expect(same.request.activeTracks.trackIds == [3, 5, 1])
        let unknown = CastdError(
            .notFound, "the media has no track 9 (its tracks: 1, 2, 3, 4, 5; castc tracks lists them)")
        #expect(throws: unknown) {
            try parse(["tracks", "enable", "9"], as: TracksEnableCommand.self).call(current: status)
        }
        // Turning off a track the media does not have is the same mistake, said the same way.
        #expect(throws: unknown) {
            try parse(["tracks", "disable", "9"], as: TracksDisableCommand.self).call(current: status)
        }
    }

    @Test func disabling() throws {
        let one = try parse(["tracks", "disable", "1"], as: TracksDisableCommand.self).call(current: status)
        #expect(one.method == .editTracks)
        #expect(one.request.hasActiveTracks && one.request.activeTracks.trackIds == [3, 5])
        let all = try parse(["tracks", "disable", "--all"], as: TracksDisableCommand.self).call(current: status)
        #expect(all.request.hasActiveTracks && all.request.activeTracks.trackIds == [3, 5])
        var undescribed = CastdMediaStatus()
        undescribed.activeTrackIds = [1, 2]
        let blind = try parse(["tracks", "disable", "--all"], as: TracksDisableCommand.self).call(current: undescribed)
        #expect(blind.request.hasActiveTracks && blind.request.activeTracks.trackIds.isEmpty)
    }

    @Test func style() throws {
        let call = try parse(
            [
                "tracks", "style", "--font-scale", "1.5", "--foreground", "#ffff00", "--background", "#00000080",
                "--edge-type", "drop-shadow", "--edge-color", "#000000FF", "--font-family", "Droid Sans",
                "--font-generic-family", "monospaced-sans-serif", "--font-style", "bold-italic", "--window-type",
                "rounded-corners", "--window-color", "#11223344",
            ],
            as: TracksStyleCommand.self
        ).call()
        #expect(call.method == .editTracks)
        #expect(!call.request.hasActiveTracks)
        let style = call.request.textTrackStyle
        #expect(style.fontScale == 1.5)
        #expect(style.foregroundColor == "#FFFF00FF")
        #expect(style.backgroundColor == "#00000080")
        #expect(style.edgeType == "DROP_SHADOW")
        #expect(style.edgeColor == "#000000FF")
        #expect(style.fontFamily == "Droid Sans")
        #expect(style.fontGenericFamily == "MONOSPACED_SANS_SERIF")
        #expect(style.fontStyle == "BOLD_ITALIC")
        #expect(style.windowType == "ROUNDED_CORNERS")
        #expect(style.windowColor == "#11223344")
        let scaleOnly = try parse(["tracks", "style", "--font-scale", "2"], as: TracksStyleCommand.self).call()
        #expect(
            scaleOnly.request.textTrackStyle
                == {
                    var s = CastdTextTrackStyle(); s.fontScale = 2; return s
                }())
    }

    @Test func badTrackArgumentsAreUsageErrors() {
        #expect(usageError(["tracks", "enable"]).contains("castc tracks list"))
        #expect(usageError(["tracks", "enable", "one"]).contains("'one' is not a track id"))
        #expect(usageError(["tracks", "disable"]).contains("--all"))
        #expect(usageError(["tracks", "disable", "1", "--all"]).contains("not both"))
        #expect(usageError(["tracks", "style"]).contains("say what to change"))
        #expect(usageError(["tracks", "style", "--foreground", "yellow"]).contains("#RRGGBBAA"))
        #expect(usageError(["tracks", "style", "--font-scale", "0"]).contains("give 0.1 to 10"))
        #expect(usageError(["tracks", "style", "--edge-type", "glow"]).contains("drop-shadow"))
        #expect(usageError(["tracks", "style", "--font-style", "heavy"]).contains("bold-italic"))
    }
}

@Suite(.tags(.cpuBound)) struct VolumeRequestTests {
    func action(_ arguments: [String]) throws -> VolumeCommand.Action {
        try parse(["volume"] + arguments, as: VolumeCommand.self).action()
    }

    func setVolume(level: Double? = nil, muted: Bool? = nil, steps: Int32 = 0) -> Castd_V1_SetVolumeRequest {
        var request = Castd_V1_SetVolumeRequest()
        if let level { request.level = level }
        if let muted { request.muted = muted }
        request.steps = steps
        return request
    }

    @Test func levelsStepsMutingAndStream() throws {
        #expect(try action([]) == .show(stream: false))
        #expect(try action(["--stream"]) == .show(stream: true))
        #expect(try action(["40%"]) == .setDevice(setVolume(level: 0.4)))
        #expect(try action(["0.25", "--unmute"]) == .setDevice(setVolume(level: 0.25, muted: false)))
        #expect(try action(["--mute"]) == .setDevice(setVolume(muted: true)))
        #expect(try action(["up"]) == .setDevice(setVolume(steps: 1)))
        #expect(try action(["down"]) == .setDevice(setVolume(steps: -1)))
        #expect(try action(["UP", "--steps", "3"]) == .setDevice(setVolume(steps: 3)))
        #expect(try action(["down", "--steps", "2"]) == .setDevice(setVolume(steps: -2)))
        #expect(try action(["80%", "--stream"]) == .setStream(setVolume(level: 0.8)))
        #expect(try action(["--mute", "--stream"]) == .setStream(setVolume(muted: true)))
        let withDevice = try parse(["volume", "up", "--device", "TV"], as: VolumeCommand.self).action()
        var expected = setVolume(steps: 1)
        expected.device = "TV"
        #expect(withDevice == .setDevice(expected))
    }

    @Test func muteAndUnmute() throws {
        let mute = try parse(["mute", "--device", "TV"], as: MuteCommand.self).call()
        #expect(mute.method == .setVolume)
        #expect(mute.request.device == "TV" && mute.request.hasMuted && mute.request.muted && !mute.request.hasLevel)
        let unmute = try parse(["unmute"], as: UnmuteCommand.self).call()
        #expect(unmute.request.hasMuted && !unmute.request.muted)
        #expect(try parse(["mute", "--stream"], as: MuteCommand.self).stream)
        #expect(try parse(["unmute", "--stream"], as: UnmuteCommand.self).stream)
    }

    @Test func badVolumeArgumentsAreUsageErrors() {
        #expect(usageError(["volume", "40%", "--steps", "2"]).contains("--steps goes with up or down"))
        #expect(usageError(["volume", "up", "--steps", "0"]).contains("give 1 to 100"))
        #expect(usageError(["volume", "up", "--stream"]).contains("the stream's volume has no steps"))
        #expect(usageError(["volume", "up", "--mute"]).contains("not both"))
        #expect(usageError(["volume", "louder"]).contains("is not a volume"))
        #expect(usageError(["mute", "50%"]).contains("50%"))
    }
}

@Suite(.tags(.cpuBound)) struct SessionAndDeviceRequestTests {
    @Test func launch() throws {
        let call = try parse(
            [
                "launch", "ABCD1234", "--android-tv", "--credentials", "tok", "--credentials-type", "oauth",
                "--language", "en-US", "--relaunch", "--device", "TV",
            ],
            as: LaunchCommand.self
        ).call()
        #expect(call.method == .startSession)
        #expect(call.request.device == "TV")
        #expect(call.request.appID == "ABCD1234")
        #expect(call.request.mode == .launch)
        #expect(call.request.hasLaunch)
        #expect(call.request.launch.androidTv)
        #expect(call.request.launch.credentials == "tok")
        #expect(call.request.launch.credentialsType == "oauth")
        #expect(call.request.launch.language == "en-US")

        let plain = try parse(["launch", "CC1AD845"], as: LaunchCommand.self).call().request
        #expect(plain.mode == .joinOrLaunch && !plain.hasLaunch)
        #expect(try parse(["launch", "CC1AD845", "--join-only"], as: LaunchCommand.self).call().request.mode == .join)

        #expect(usageError(["launch"]).contains("app-id"))
        _ = usageError(["launch", "CC1AD845", "--relaunch", "--join-only"])
        #expect(usageError(["launch", "CC1AD845", "--credentials-type", "x"]).contains("goes with --credentials"))
        #expect(usageError(["launch", "CC1 AD845"]).contains("is not an app id"))
    }

    @Test func apps() throws {
        let call = try parse(["apps", "Living Room TV", "CC1AD845", "233637DE"], as: AppsCommand.self).call()
        #expect(call.method == .getAppAvailability)
        #expect(call.request.device == "Living Room TV")
        #expect(call.request.appIds == ["CC1AD845", "233637DE"])
        #expect(
            usageError(["apps", "TV"]).contains("give the app ids to ask about: castc apps --device \"TV\" CC1AD845"))
        #expect(usageError(["apps"]).contains("give the app ids to ask about: castc apps CC1AD845"))
        // The usage line's --device: every argument is then an app id.
        let named = try parse(["apps", "--device", "Living Room TV", "CC1AD845"], as: AppsCommand.self).call()
        #expect(named.request.device == "Living Room TV" && named.request.appIds == ["CC1AD845"])
        // No device: castd picks it (the one with a session, else the only one).
        let chosen = try parse(["apps", "CC1AD845", "233637DE"], as: AppsCommand.self).call()
        #expect(chosen.request.device == "" && chosen.request.appIds == ["CC1AD845", "233637DE"])
    }

    @Test func devicesCriteria() throws {
        let call = try parse(
            [
                "devices", "--app", "CC1AD845", "--app", "233637DE", "--capability", "video-out", "--capability",
                "audio-out",
            ],
            as: DevicesListCommand.self
        ).call()
        #expect(call.method == .listDevices)
        #expect(call.request.appIds == ["CC1AD845", "233637DE"])
        #expect(call.request.capabilities == 1 | 4)
        #expect(!call.request.all)
        #expect(try parse(["devices", "--all"], as: DevicesListCommand.self).call().request.all)
        #expect(usageError(["devices", "--all", "--app", "CC1AD845"]).contains("--all lists every device"))
        #expect(
            DeviceTable.criterionNote(["233637DE"])
                == "(castd lists only the devices that can run 233637DE; castc devices --all lists every one)")
        #expect(
            try parse(["devices", "--capability", "group"], as: DevicesListCommand.self).call().request.capabilities
                == 32)
        #expect(
            try parse(["devices", "--capability", "video-in"], as: DevicesListCommand.self).call().request.capabilities
                == 2
        )
        #expect(
            try parse(["devices", "--capability", "audio-in"], as: DevicesListCommand.self).call().request.capabilities
                == 8
        )
        let plain = try parse(["devices"], as: DevicesListCommand.self).call().request
        #expect(plain.appIds.isEmpty && plain.capabilities == 0)
        let bad = usageError(["devices", "--capability", "screen"])
        for allowed in ["video-out", "video-in", "audio-out", "audio-in", "group"] { #expect(bad.contains(allowed)) }
        #expect(usageError(["devices", "--app", ""]).contains("is not an app id"))
    }

    @Test func sendAndListen() throws {
        let text = try parse(["send", "urn:x-cast:com.example.game", "hello"], as: SendCommand.self)
        let textCall = text.call(message: text.message)
        #expect(textCall.method == .sendMessage)
        #expect(textCall.request.namespace == "urn:x-cast:com.example.game")
        #expect(textCall.request.payload == .text("hello"))
        let json = try parse(["send", "urn:x-cast:com.example.game", "--json", #"{"x":1}"#], as: SendCommand.self)
        #expect(json.call(message: json.message).request.payload == .json(#"{"x":1}"#))
        #expect(try parse(["send", "urn:x-cast:a", "--json", "-"], as: SendCommand.self).message == "-")

        #expect(usageError(["send", "com.example.game", "hi"]).contains("custom namespaces start with urn:x-cast:"))
        #expect(usageError(["send", "urn:x-cast:", "hi"]).contains("urn:x-cast:"))
        #expect(usageError(["send", "urn:x-cast:a", "--json", "{oops"]).contains("the message is not JSON"))
        #expect(usageError(["send", "urn:x-cast:a"]).contains("message"))

        let listen = try parse(
            ["listen", "urn:x-cast:com.example.game", "--count", "3", "--device", "TV"], as: ListenCommand.self)
        #expect(listen.count == 3)
        #expect(listen.request.namespace == "urn:x-cast:com.example.game")
        #expect(listen.request.device == "TV")
        #expect(usageError(["listen", "game"]).contains("urn:x-cast:"))
        #expect(usageError(["listen", "urn:x-cast:a", "--count", "0"]).contains("give 1 or more"))
    }

    @Test func statusAndWatchVerbose() throws {
        #expect(try parse(["status", "--verbose"], as: StatusCommand.self).verbose)
        #expect(try parse(["status", "-v"], as: StatusCommand.self).verbose)
        #expect(try parse(["watch", "--verbose"], as: WatchCommand.self).verbose)
        #expect(!(try parse(["status"], as: StatusCommand.self).verbose))
    }
}
