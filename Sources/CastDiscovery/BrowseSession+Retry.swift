import CAvahi
import Dispatch
import Logging

extension BrowseSession {
    // MARK: retrying failed resolves

    func scheduleRetry(_ key: ServiceKey, reason: String) {
        let delay = state.withLock { state -> Duration? in
            guard var service = state.services[key] else { return nil }
            service.failures += 1
            let delay = limits.retryDelay(afterFailures: service.failures)
            service.phase = .retrying(due: .now + delay)
            state.services[key] = service
            state.retrying.insert(key)
            return delay
        }
        guard let delay else { return }
        count { $0.failedResolves += 1 }
        if let metadata = failedLog.metadata([
            "mdns.service": "\(key.name)", "avahi.error": "\(reason)", "retry.in": "\(delay)",
        ]) {
            logger.debug("Service did not resolve; trying again later", metadata: metadata)
        }
        armRetryTimer()
    }

    /// The timer fires for the earliest retry due.
    func armRetryTimer() {
        let next = state.withLock { state in
            var earliest: ContinuousClock.Instant?
            for key in state.retrying {
                if case .retrying(let due)? = state.services[key]?.phase, earliest.map({ due < $0 }) ?? true {
                    earliest = due
                }
            }
            return earliest
        }
        guard let timer = retryTimer.withLock({ $0 }) else { return }
        guard let next else {
            timer.cancel()
            return
        }
        timer.schedule(after: max(.zero, next - .now))
    }

    func retryDue() {
        let now = ContinuousClock.now
        state.withLock { state in
            for key in state.retrying {
                guard var service = state.services[key], case .retrying(let due) = service.phase else {
                    state.retrying.remove(key)
                    continue
                }
                guard due <= now else { continue }
                service.phase = .waiting
                state.services[key] = service
                state.retrying.remove(key)
                state.waiting.push(key)
            }
        }
        let client = state.withLock { $0.browser }.map { avahi_service_browser_get_client($0.pointer) }
        pump(client: client ?? nil)
        armRetryTimer()
    }
}
