import CastEmulator
import Logging

/// `--publish`: announce the emulator as `_googlecast._tcp` over mDNS.
///
/// This is the single place where publishing is wired. It is meant to become a
/// `CastDiscovery.AvahiPublisher` that publishes `emulator.serviceInstanceName` on
/// `endpoints.port` with `emulator.txtRecord`, re-published from `emulator.txtRecordChanges()`
/// (`st` and `rs` follow the running app).
func publishOverMDNS(_ emulator: CastDeviceEmulator, endpoints: EmulatorEndpoints, logger: Logger) {
    logger.warning(
        "--publish: mDNS publishing is not wired yet; would publish \(emulator.serviceInstanceName)._googlecast._tcp on port \(endpoints.port) with TXT \(emulator.txtRecord.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
    )
}
