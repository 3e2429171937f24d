import CastClient
import CastdAPI

/// Long queues for tests: numbered, titled tracks.
public enum QueueFixture {
    /// Track `number`: an MP3 of 200 s titled "Track `number`".
    public static func track(_ number: Int) -> CastdQueueItem {
        var item = CastdQueueItem()
        item.media.contentURL = "https://example.com/tracks/\(number).mp3"
        item.media.contentType = "audio/mpeg"
        item.media.duration = 200
        item.media.metadata.metadataType = .musicTrack
        item.media.metadata.title = "Track \(number)"
        return item
    }

    /// Loads tracks 1…`count`: a QUEUE_LOAD of the first 100, then QUEUE_INSERTs of 100 at the
    /// end (a CastV2 message holds at most 64 KiB, as senders that load long queues know).
    public static func loadTracks(_ count: Int, with client: CastdClient) async throws -> CastdMediaStatus {
        var load = Castd_V1_QueueLoadRequest()
        load.items = (1...min(count, 100)).map(track)
        var status = try await client.unary(.queueLoad, load, as: CastdMediaStatus.self)
        var next = 101
        while next <= count {
            var insert = Castd_V1_QueueInsertRequest()
            insert.items = (next...min(count, next + 99)).map(track)
            status = try await client.unary(.queueInsert, insert, as: CastdMediaStatus.self)
            next += 100
        }
        return status
    }
}
