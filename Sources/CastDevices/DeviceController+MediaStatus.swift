import CastProtocol
import CastdAPI

/// MEDIA_STATUS: the media controller reads it; what it says changed goes to every watcher.
extension DeviceController {
    /// Applies a MEDIA_STATUS payload (a reply or a broadcast).
    func applyMedia(_ payload: JSONValue, arrival: UInt64? = nil) {
        if let status = mediaState.apply(payload, arrival: arrival) { store.updateMedia(status) }
        askQueueOrderIfWanted()
    }

    /// Forgets the media and tells every watcher nothing is loaded.
    func clearMedia() {
        store.updateMedia(mediaState.clear())
    }
}
