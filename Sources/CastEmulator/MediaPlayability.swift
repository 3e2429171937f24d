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
