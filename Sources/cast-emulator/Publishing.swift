import ArgumentParser
import CastDiscovery
import CastEmulator
import Logging

/// `--publish`: announce the emulator as `_googlecast._tcp` over mDNS.
///
/// Publishes `emulator.serviceInstanceName` on `endpoints.port` with `emulator.txtRecord`
/// through the system's Avahi, for as long as the returned publisher lives. The caller keeps
/// the TXT record current from `emulator.txtRecordChanges()` (`st` and `rs` follow the app).
func publishOverMDNS(_ emulator: CastDeviceEmulator, endpoints: EmulatorEndpoints, logger: Logger) throws
    -> AvahiPublisher
{
    do {
        let publisher = try AvahiPublisher(
            name: emulator.serviceInstanceName, port: endpoints.port, txt: emulator.txtRecord, logger: logger)
        logger.info("publishing \(publisher.name)._googlecast._tcp on port \(endpoints.port)")
        return publisher
    } catch {
        throw ValidationError(
            "--publish: cannot publish over mDNS: \(error). Is avahi-daemon running? (scripts/avahi-loopback.sh start DIR starts one on loopback)"
        )
    }
}
