/// Decides how castd serves a file to a device: as it is when the device plays it, else the
/// least work that makes it playable, in rungs (``ConversionPlan/Rung``): remux the streams into
/// a container the device opens; convert the audio; convert the video. Pure logic over a
/// ``MediaProbe`` and ``DeviceCapabilities``: no ffmpeg is run here.
public enum ConversionPlanner {
    /// The plan for the file on the device, or why there is none.
    ///
    /// One video stream is sent (the first; cover art is not one) and one audio stream (the one
    /// whose index is `audioTrack`, else the one the file marks default, else the first).
    /// `atLeast` asks for a given rung or more: after a device fails to load what a plan made,
    /// castd asks for the next rung down (`atLeast: .remux` remuxes a file that looked playable
    /// as it is; `.video` converts the video).
    public static func plan(
        _ probe: MediaProbe, for device: DeviceCapabilities, mode: TranscodeMode = .auto, audioTrack: Int? = nil,
        atLeast: ConversionPlan.Rung = .asIs
    ) -> Result<ConversionPlan, ConversionRefusal> {
        let video = device.isAudioOnly ? nil : probe.video.first
        let droppedVideo = device.isAudioOnly && !probe.video.isEmpty
        let audio: MediaProbe.AudioStream?
        if let audioTrack {
            guard let asked = probe.audio.first(where: { $0.index == audioTrack }) else {
                return .failure(.init(.noSuchAudioTrack, "the file has no audio stream \(audioTrack)"))
            }
            audio = asked
        } else {
            audio = defaultAudio(probe)
        }
        guard video != nil || audio != nil else {
            let reason =
                droppedVideo
                ? "nothing playable: the \(device.model) plays audio only and the file has no audio"
                : "nothing playable: the file has no audio or video stream"
            return .failure(.init(.nothingPlayable, reason))
        }

        let videoIssue = video.flatMap { videoProblem($0, device) }
        let audioIssue = audio.flatMap { audioProblem($0, device) }
        var floor = max(atLeast, mode == .always ? .remux : .asIs)
        // A rung with nothing to work on gives way to the next: audio to video for a file
        // without audio; and there is nothing below converting the video.
        if floor == .audio && audio == nil { floor = .video }
        if floor == .video && video == nil {
            return .failure(
                .init(.noLowerRung, "the \(device.model) could not play the file even with its audio converted"))
        }

        var convertVideo = videoIssue != nil || floor == .video
        var convertAudio = audioIssue != nil || floor == .audio
        let sourceContainer = MediaContainer(probe)
        let asIs =
            !convertVideo && !convertAudio && floor == .asIs && !droppedVideo
            && device.containers.contains(sourceContainer) && probe.video.count <= 1
            && (audio == nil || audio == defaultAudio(probe))

        var container: ConversionPlan.Container = .asIs
        var audioTarget: ConversionPlan.AudioTarget?
        if !asIs {
            // Copy what can be copied; convert the audio if no container holds it with the video,
            // then the video if still none does.
            while true {
                let videoCodec = video.map { convertVideo ? "h264" : $0.codec }
                audioTarget = convertAudio ? audio.map { audioOutput($0, device, video: videoCodec) } : nil
                if let found = outputContainer(video: videoCodec, audio: audioTarget?.codec ?? audio?.codec) {
                    container = found
                    break
                }
                if !convertAudio && audio != nil {
                    convertAudio = true
                } else if !convertVideo && video != nil {
                    convertVideo = true
                } else {
                    return .failure(.init(.nothingPlayable, "nothing playable: no container holds the streams"))
                }
            }
        }

        let rung: ConversionPlan.Rung =
            convertVideo ? .video : convertAudio ? .audio : asIs ? .asIs : .remux
        if mode == .never && rung > .asIs {
            let why = neverReason(
                probe, device, audio: audio, issues: [videoIssue, audioIssue].compactMap { $0 },
                container: sourceContainer, droppedVideo: droppedVideo)
            return .failure(.init(.transcodingOff, why + " and converting is turned off (--transcode never)"))
        }

        var plan = ConversionPlan(
            rung: rung, container: container,
            video: video.map {
                .init(index: $0.index, action: convertVideo ? .transcode(videoOutput($0, device)) : .copy)
            },
            audio: audio.map { .init(index: $0.index, action: audioTarget.map { .transcode($0) } ?? .copy) },
            droppedVideo: droppedVideo,
            subtitles: droppedVideo ? [] : probe.subtitles.filter(\.isText).map(\.index),
            imageSubtitles: droppedVideo ? [] : probe.subtitles.filter { !$0.isText }.map(\.index),
            summary: "")
        plan.summary = summary(plan, source: sourceContainer, video: video, audio: audio)
        return .success(plan)
    }

    /// The audio a device plays of a file it is given as it is: the one marked default, else
    /// the first.
    static func defaultAudio(_ probe: MediaProbe) -> MediaProbe.AudioStream? {
        probe.audio.first(where: \.isDefault) ?? probe.audio.first
    }

    /// What stands between the file and the device, for a refusal under `--transcode never`:
    /// the first of an audio-only device, a stream it cannot play, a container it cannot open,
    /// a track it would not pick.
    static func neverReason(
        _ probe: MediaProbe, _ device: DeviceCapabilities, audio: MediaProbe.AudioStream?, issues: [String],
        container: MediaContainer, droppedVideo: Bool
    ) -> String {
        let model = "the \(device.model)"
        if droppedVideo { return "\(model) plays audio only and the file has video" }
        if let issue = issues.first { return "\(model) cannot play \(issue)" }
        if !device.containers.contains(container) { return "\(model) cannot play the \(container.name) container" }
        if let audio, audio != defaultAudio(probe) {
            return "\(model) plays the file's default audio track, not stream \(audio.index)"
        }
        if probe.video.count > 1 { return "\(model) cannot pick one of the file's \(probe.video.count) video streams" }
        return "\(model) could not play the file as it is"
    }

    /// The plan in a line for `castc status`.
    static func summary(
        _ plan: ConversionPlan, source: MediaContainer, video: MediaProbe.VideoStream?, audio: MediaProbe.AudioStream?
    ) -> String {
        var text: String
        switch plan.rung {
        case .asIs:
            text = "serving as is"
        case .remux:
            text = "remuxing \(source.name) → \(containerName(plan.container))"
        case .audio, .video:
            var parts: [String] = []
            if let video, case .transcode(let target)? = plan.video?.action {
                var part = "video \(video.codec)"
                if target.scaled { part += " \(min(video.width, video.height))p" }
                part += " → h264"
                if target.scaled { part += " \(min(target.width, target.height))p" }
                if target.toneMap { part += " (\(hdrName(video.hdr)) → SDR)" }
                parts.append(part)
            }
            if let audio, case .transcode(let target)? = plan.audio?.action {
                var from = "\(audio.codec) \(channelsName(audio.channels))"
                var to = "\(target.codec) \(channelsName(target.channels))"
                if target.codec == "flac" {
                    from += " " + kHz(audio.sampleRate)
                    to += " " + kHz(target.sampleRate)
                }
                parts.append("audio \(from) → \(to)")
            }
            text = "transcoding " + parts.joined(separator: " and ")
        }
        if plan.droppedVideo { text += " (video dropped: audio-only device)" }
        return text
    }

    static func containerName(_ container: ConversionPlan.Container) -> String {
        switch container {
        case .asIs: "as is"
        case .fragmentedMP4: "mp4"
        case .webm: "webm"
        case .audio(let audio): audio.rawValue
        }
    }
}
