import DequeModule
import GeoAlarmCore
import GeoAlarmStore
import GeoAlarmSystem
import Logging

/// The messages that must reach the broker (OwnTracks transitions): written to the state file
/// before anything is sent, sent in order with at most ``window`` in flight, forgotten once the
/// broker acknowledged them, and sent again from the oldest after a reconnect; so that none is
/// lost while the broker is away or the agent restarts. While it is away, at most
/// `outbox_limit` wait: beyond, the oldest go, said once and then every thousandth.
///
/// The file is written once a turn of the loop: the messages a turn appended in one
/// transaction, the ones the broker acknowledged in another. A burst of thousands of
/// transitions costs a few transactions, not two each, and is sent as fast as the broker
/// acknowledges it.
///
/// While the broker is connected, a burst that fills half the outbox holds the agent back (see
/// ``room()``) until a quarter is left, so that a broker slower than the agent's source loses
/// nothing; `outbox_limit` and its drops are for a broker that is away. The agent waits between
/// batches of fixes, so one batch's transitions may take the outbox past its limit while the
/// broker is there: they are kept (the file too), never dropped.
///
/// Kept on the loop (``Confined``): no lock, and the state file written from the loop's thread.
public final class MQTTOutbox: MQTTParticipant {
    private let limit: Int
    private let qos: Int
    private let keeper: StateKeeper?
    private let logger: Logger
    private let loop: EventLoop
    private let state: Confined<State>

    /// The state file's queue that holds the outbox.
    static let queue = "mqtt-outbox"
    /// How many messages are in flight (sent, not yet acknowledged) at once.
    static let window = MQTTClient.sendMaximum

    private struct State {
        /// The waiting messages, oldest first: a copy of what the file holds (read once, at start).
        /// A deque: an acknowledgement removes one of the first `window`, a full outbox its
        /// oldest, each without moving the thousands behind it.
        var messages: Deque<Message> = []
        var nextNumber: Int64 = 1
        /// The messages numbered up to this one are in the file (or were offered to it): those
        /// after it wait for the turn's write, and are not sent before.
        var writtenThrough: Int64 = 0
        /// The rows of acknowledged messages, deleted from the file at the turn's write.
        var delivered: [Int64] = []
        /// Whether the turn's write is due on the loop.
        var isWriteDue = false
        /// Those waiting in ``room()``.
        var waitingForRoom: [CheckedContinuation<Void, Never>] = []
        /// The connection messages go out on, while connected.
        var link: MQTTLink?
        /// Numbers by the message id they were sent with.
        var inFlight: [Int32: Int64] = [:]
        /// The number sent last on this connection.
        var lastSent: Int64 = 0
        var dropped = 0
        var refused = 0
        /// Whether the file keeps them (false once it failed, or without a file).
        var isKept = true
    }

    /// A message waiting: numbered in memory (in order), with its row in the file's queue.
    struct Message {
        var number: Int64
        var row: Int64?
        var topic: String
        var payload: [UInt8]
    }

    /// An outbox of at most `limit` messages, sent at `qos`, kept in `keeper`'s state file (none:
    /// in memory only).
    public init(limit: Int, qos: Int, keeper: StateKeeper?, loop: EventLoop, logger: Logger) {
        self.limit = limit
        self.qos = qos
        self.keeper = keeper
        self.logger = logger
        self.loop = loop
        state = Confined(State(isKept: keeper != nil), on: loop)
    }

    /// How many messages wait.
    var waiting: Int { state.value.messages.count }

    /// Reads what the file holds (left by a broker outage or a stop).
    func load() {
        guard state.value.isKept, let keeper else { return }
        do {
            let stored = try keeper.withStore { store throws(StoreError) in try store.queue(named: Self.queue).all() } ?? []
            state.value.messages = Deque(stored.enumerated().map { index, message in
                Message(number: Int64(index + 1), row: message.number, topic: message.key, payload: message.payload)
            })
            state.value.nextNumber = Int64(stored.count + 1)
            state.value.writtenThrough = Int64(stored.count)
        } catch {
            logger.error("\(error); the mqtt outbox is kept in memory from now on")
            state.value.isKept = false
        }
        if waiting > 0 { logger.info("mqtt outbox: \(DisplayText.counted(waiting, "event")) waiting for the broker") }
    }

    /// Adds a message: written to the file at the end of the loop's turn, then sent.
    func append(topic: String, payload: [UInt8]) {
        let number = state.value.nextNumber
        state.value.nextNumber += 1
        state.value.messages.append(Message(number: number, row: nil, topic: topic, payload: payload))
        // The file drops the same oldest messages when the turn's are written. A connected
        // broker is about to take them: the agent waits for room after the batch instead.
        let excess = state.value.link == nil ? state.value.messages.count - limit : 0
        if excess > 0 {
            state.value.messages.removeFirst(excess)
            noteDropped(excess)
        }
        guard state.value.isKept else {
            state.value.writtenThrough = number
            return pump()
        }
        writeAtTurnEnd()
    }

    /// A connection is up: everything not acknowledged goes again, oldest first.
    func connected(_ link: MQTTLink) {
        state.value.link = link
        state.value.inFlight = [:]
        state.value.lastSent = 0
        pump()
    }

    /// The connection is gone: nothing is in flight any more, and the outbox keeps what comes
    /// (up to its limit) rather than holding the agent back.
    func disconnected() {
        state.value.link = nil
        state.value.inFlight = [:]
        makeRoom()
    }

    /// Returns once the outbox has room: at once while the broker is away or less than half of
    /// the outbox is full, else when a quarter is left or the broker goes.
    func room() async {
        guard state.value.link != nil, waiting >= max(1, limit / 2) else { return }
        await withCheckedContinuation { continuation in state.value.waitingForRoom.append(continuation) }
    }

    /// Lets those waiting in ``room()`` go.
    private func makeRoom() {
        let waiters = state.value.waitingForRoom
        state.value.waitingForRoom = []
        for waiter in waiters { waiter.resume() }
    }

    /// The broker has the message sent with `id`.
    func acknowledged(_ id: Int32) {
        guard let number = state.value.inFlight.removeValue(forKey: id) else { return }
        remove(number)
        pump()
    }

    /// At a stop: what the turn has not written yet written, and the events dropped, said.
    func stopping() {
        write()
        makeRoom()
        if state.value.dropped > 0 { logger.warning("mqtt outbox: \(DisplayText.counted(state.value.dropped, "event")) dropped as it was full") }
    }

    /// Sends the next messages, up to ``window`` in flight.
    private func pump() {
        guard let link = state.value.link, state.value.inFlight.count < Self.window else { return }
        let first = position(after: state.value.lastSent)
        let last = min(first + Self.window - state.value.inFlight.count, position(after: state.value.writtenThrough))
        for message in state.value.messages[first..<last] {
            switch link.publish(MQTTMessage(topic: message.topic, payload: message.payload)) {
            case .notConnected:
                return
            case .refused(let reason):
                // Never sendable: kept, it would hold every message after it for ever.
                state.value.lastSent = message.number
                remove(message.number)
                state.value.refused += 1
                logger.warning("""
                    mqtt: dropped a message for \(DisplayText.excerpt(message.topic.utf8)) that cannot be sent \
                    (\(reason)); \(state.value.refused) so far
                    """)
            case .sent(let id):
                state.value.lastSent = message.number
                // At QoS 0 nothing is acknowledged: sent is done.
                if qos == 0 { remove(message.number) } else { state.value.inFlight[id] = message.number }
            }
        }
    }

    /// Forgets an acknowledged message, in the file too at the end of the loop's turn.
    private func remove(_ number: Int64) {
        let index = position(after: number - 1)
        guard index < state.value.messages.endIndex, state.value.messages[index].number == number else { return }
        let message = state.value.messages.remove(at: index)
        if !state.value.waitingForRoom.isEmpty, waiting <= limit / 4 { makeRoom() }
        guard state.value.isKept, let row = message.row else { return }
        state.value.delivered.append(row)
        writeAtTurnEnd()
    }

    /// Has ``write()`` run once the loop's turn is over (once, however many messages the turn
    /// appended or the broker acknowledged).
    private func writeAtTurnEnd() {
        guard !state.value.isWriteDue else { return }
        state.value.isWriteDue = true
        loop.execute { [self] in write() }
    }

    /// Deletes the acknowledged messages from the file, then writes the appended ones (the file
    /// dropping its oldest beyond the limit, as the memory did), then sends what it can.
    private func write() {
        state.value.isWriteDue = false
        let delivered = state.value.delivered
        state.value.delivered = []
        let start = position(after: state.value.writtenThrough)
        let fresh = state.value.messages[start...]
        if let last = fresh.last { state.value.writtenThrough = last.number }
        if state.value.isKept, let keeper {
            do {
                if !delivered.isEmpty {
                    _ = try keeper.withStore { store throws(StoreError) in try store.queue(named: Self.queue).remove(delivered) }
                }
            } catch {
                logger.error("\(error); \(delivered.count) acknowledged messages stay in the mqtt outbox")
            }
            // Past the limit only by what a connected broker's batch added: the file keeps those too.
            let kept = max(limit, state.value.messages.count)
            do {
                if !fresh.isEmpty, let rows = try keeper.withStore({ store throws(StoreError) in
                    try store.queue(named: Self.queue).append(fresh.map { QueuedMessage(key: $0.topic, payload: $0.payload) }, limit: kept).numbers
                }) {
                    for (offset, row) in rows.enumerated() { state.value.messages[start + offset].row = row }
                }
            } catch {
                logger.error("\(error); the mqtt outbox is kept in memory from now on")
                state.value.isKept = false
            }
        }
        pump()
    }

    private func noteDropped(_ count: Int) {
        state.value.dropped += count
        let dropped = state.value.dropped
        // Once, then every thousandth: a long outage must not flood the log.
        if dropped == count || dropped % 1000 < count {
            logger.warning("mqtt outbox full (\(limit) events): dropped the oldest, \(dropped) so far")
        }
    }

    /// The index of the first message numbered after `number` (the messages are in number order).
    private func position(after number: Int64) -> Int {
        let messages = state.value.messages
        var low = messages.startIndex, high = messages.endIndex
        while low < high {
            let middle = (low + high) / 2
            if messages[middle].number <= number { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
