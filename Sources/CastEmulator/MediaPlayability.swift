import CastdConversion

/// Whether the emulated model plays fetched media (``EmulatorConfiguration/probeMedia``): ffprobe
/// says what the URL holds, and castd's table of what each model plays says whether this one
/// plays it as it is.
enum MediaPlayability {
    /// nil when the model plays `url`; else why not, for the log and the emulator's history.
    static func check(_ url: String, emulator: CastDeviceEmulator) async -> String? {
        let model = emulator.configuration.model
        let probe: MediaProbe
        do {
            probe = try await FFprobe.probe(url, timeout: emulator.configuration.mediaFetchTimeout)
        } catch {
            return "the \(model) cannot read it: \(error)"
        }
        switch ConversionPlanner.plan(probe, for: DeviceCapabilities.forModel(model)) {
        case .success(let plan) where plan.rung == .asIs:
            emulator.logger.info("the \(model) plays \(url): \(plan.summary)")
            return nil
        case .success(let plan):
            return "the \(model) cannot play it as it is (it would need \(plan.summary))"
        case .failure(let refusal):
            return refusal.reason
        }
    }
}

/// Why a device that fetches its media did not play it: it could not fetch it (LOAD_FAILED
/// MEDIA_NETWORK, 103), or its model cannot play what it fetched (MEDIA_SRC_NOT_SUPPORTED, 104).
enum MediaFault: Error, Equatable, CustomStringConvertible {
    case unreachable(String)
    case unplayable(String)

    /// LOAD_FAILED's detailedErrorCode.
    var code: Int {
        switch self {
        case .unreachable: EmulatedDevice.mediaNetwork
        case .unplayable: EmulatedDevice.mediaSourceNotSupported
        }
    }

    var verb: String {
        switch self {
        case .unreachable: "cannot fetch"
        case .unplayable: "cannot play"
        }
    }

    var description: String {
        switch self {
        case .unreachable(let reason), .unplayable(let reason): reason
        }
    }
}
