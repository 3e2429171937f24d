import CSystemd
import CastdSupport
import Glibc

/// libsystemd's event loop (sd-event) on a thread of its own, with every D-Bus connection of
/// cast-mpris attached to it: sd-bus then waits on each connection's descriptor with the events
/// and timeout it asks for (`sd_bus_get_fd`, `get_events`, `get_timeout`), so the loop sleeps
/// until the bus or castd has something, and never polls.
///
/// sd-bus and sd-event objects belong to one thread; everything that touches them runs on this
/// loop. Other threads hand it work with ``post(_:)``, which wakes it through an eventfd.
public final class BusLoop: @unchecked Sendable {
    /// The sd_event; touched only on the loop's thread once ``run()`` has started.
    let event: OpaquePointer
    private let wakeFD: Int32
    private var wakeSource: OpaquePointer?
    private let pending = Locked<[@Sendable () -> Void]>([])
    private let threadID = Locked<pthread_t?>(nil)

    /// Connects to the user's session bus once and waits for the bus's Hello, so that
    /// cast-mpris can refuse to start without one instead of failing when media first appears.
    public static func checkSessionBus() throws(BusError) {
        var bus: OpaquePointer? = nil
        try check(sd_bus_open_user(&bus), "connect to the session bus")
        defer { sd_bus_flush_close_unref(bus) }
        var unique: UnsafePointer<CChar>? = nil
        try check(sd_bus_get_unique_name(bus, &unique), "register on the session bus")
    }

    public init() throws(BusError) {
        var event: OpaquePointer? = nil
        try check(sd_event_new(&event), "create an sd-event loop")
        self.event = event!
        wakeFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeFD >= 0 else {
            sd_event_unref(self.event)
            throw BusError.failed("cannot create an eventfd: \(String(cString: strerror(errno)))")
        }
        var source: OpaquePointer? = nil
        let code = sd_event_add_io(
            self.event, &source, wakeFD, UInt32(EPOLLIN.rawValue),
            { _, fd, _, userdata in
                var counter: UInt64 = 0
                _ = read(fd, &counter, 8)
                Unmanaged<BusLoop>.fromOpaque(userdata!).takeUnretainedValue().runPending()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        try check(code, "watch the loop's eventfd")
        wakeSource = source
    }

    deinit {
        if let wakeSource { sd_event_source_unref(wakeSource) }
        sd_event_unref(event)
        close(wakeFD)
    }

    /// Runs the loop on the calling thread until ``stop()``. Returns sd-event's exit code.
    @discardableResult
    public func run() -> Int32 {
        threadID.withLock { $0 = pthread_self() }
        let code = sd_event_loop(event)
        runPending()
        return code
    }

    /// Starts the loop on a new thread of its own.
    public func start(name: String = "cast-mpris-bus") {
        LoopThread.start(name: name) { [self] in run() }
    }

    /// Runs the loop on a new thread of its own, and returns once ``stop()`` has ended it.
    public func runOnThread(name: String = "cast-mpris-bus") async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            LoopThread.start(name: name) { [self] in
                run()
                done.resume()
            }
        }
    }

    /// Runs `work` on the loop's thread, soon. Safe from any thread.
    public func post(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Ends ``run()`` once the work posted before it has run.
    public func stop() {
        post { [self] in _ = sd_event_exit(event, 0) }
    }

    /// Whether the caller runs on the loop's thread.
    public var isCurrent: Bool {
        threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    private func runPending() {
        while true {
            let work = pending.withLock { pending in
                let work = pending
                pending.removeAll()
                return work
            }
            if work.isEmpty { return }
            for item in work { item() }
        }
    }
}

/// A detached pthread running a closure: the loop's thread.
enum LoopThread {
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let body: @Sendable () -> Void
            let name: String
            init(_ body: @escaping @Sendable () -> Void, name: String) {
                self.body = body
                self.name = name
            }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let box = Unmanaged.passRetained(Box(body, name: name)).toOpaque()
        let code = pthread_create(
            &thread, &attributes,
            { argument in
                let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        pthread_attr_destroy(&attributes)
        precondition(code == 0, "cannot start the thread \(name): \(String(cString: strerror(code)))")
    }
}
