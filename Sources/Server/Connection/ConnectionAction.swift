/// Which readiness events a connection wants to hear about.
package enum Interest: Sendable, Equatable {
    case none
    case read
    case write
    /// Not registered at all: a socket that hung up is reported even with no interest, so a connection that must
    /// stay open a little longer (its sink is busy) stops listening altogether.
    case detached
}

/// What the I/O shell must do next for a connection (`ConnectionStateMachine.nextAction()`), in order.
package enum ConnectionAction {
    /// Write what is queued: call `flush(to:now:)` with the socket.
    case flush
    /// Ask the poller for these events.
    case watch(Interest)
    /// Call `deadlinePassed(now:)` at or after this monotonic millisecond (0: no deadline).
    case arm(deadline: UInt64)
    /// Run the application's deferred reply off the loop, then report it with `replyReady(_:now:)`.
    case runLater(@Sendable () async -> Response)
    /// Run the application's deferred decision off the loop, then report it with `handlingReady(_:now:)`.
    case decide(@Sendable () async -> Handling)
    /// Hand a body piece to the sink off the loop, then report with `sinkTookPiece(now:)` or
    /// `sinkRefused(_:now:)` (abort the sink yourself when `sinkTookPiece` says it is no longer wanted).
    case consume(any RequestBodySink, [UInt8])
    /// Tell a sink its body will not complete.
    case abort(any RequestBodySink)
    /// Shut the sending side down and keep reading (linger), so the client reads the answer before the close.
    case halfClose
    /// Close the socket; nothing more follows.
    case close
}

/// Where a connection's bytes go: the socket, or a test's fake.
package protocol ConnectionOutput {
    /// Sends bytes; returns how many were taken, 0 when none could be (the socket is full), -1 on an error.
    mutating func send(_ bytes: UnsafeRawBufferPointer, more: Bool) -> Int
    /// Sends `count` bytes of `file` from `offset`; returns how many were taken, 0 when the socket is full, -1 on
    /// an error (or when the file ended early).
    mutating func sendFile(_ file: OpenFile, offset: Int64, count: Int) -> Int
}
