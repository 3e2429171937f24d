extension Castd_V1_Session {
    /// Whether the session is live: started, and not yet ended, failed to start or failed to
    /// resume. castd's state (GetStatus, Watch's snapshot) keeps only these; a session event
    /// may carry either. A state this build does not know counts as live: castd keeps no other.
    public var isOpen: Bool {
        switch state {
        case .ended, .startFailed, .resumeFailed, .unspecified: false
        case .starting, .started, .resuming, .resumed, .suspended, .ending, .UNRECOGNIZED: true
        }
    }
}
