import CastdSupport

/// The thread device authentication runs on. Checking a device's answer is CPU work on input
/// from a peer that has proved nothing yet; on a thread of its own it never holds one of the
/// cooperative pool's threads, so castd answers its clients and stops on SIGTERM while a device
/// is being checked. One thread: checks from several devices wait their turn, and
/// authentication never takes more than one core.
public enum AuthenticationExecutor {
    /// The name of the executor's thread, as /proc shows it.
    public static let threadName = "castd-auth"

    public static let shared = ThreadExecutor(name: threadName)
}
