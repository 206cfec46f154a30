import HTTP
import Server
import Testing

/// The connection's timeouts on a manual clock, in milliseconds, without sockets or sleeps.
@Suite("Connection state machine: timeouts on a manual clock")
struct MachineTimeoutTests {
    static let environment = MachineHarness.environment(MachineHarness.configuration())

    @Test("a connection that sends nothing is closed at the header timeout, not a millisecond before")
    func silentConnection() {
        var connection = MachineHarness(environment: Self.environment, now: 500)
        #expect(connection.deadline == 1500)
        connection.advance(to: 1499)
        #expect(!connection.closed)
        connection.advance(to: 1500)
        #expect(connection.closed)
        #expect(connection.output.bytes.isEmpty, "a timed-out head gets no answer")
    }

    @Test("a head sent one byte every 300 ms is cut at the header timeout, counted from accept")
    func trickledHead() {
        var connection = MachineHarness(environment: Self.environment)
        let request = Array(get("/hello").utf8)
        var sent = 0
        while !connection.closed, sent < request.count {
            connection.send([request[sent]])
            sent += 1
            connection.advance(to: connection.now + 300)
        }
        #expect(connection.closed)
        #expect(sent == 4, "bytes at 0, 300, 600, 900; closed at 1200 ≥ 1000")
        #expect(connection.output.bytes.isEmpty)
    }

    @Test("between requests the idle timeout applies, from the moment the answer was sent")
    func idle() {
        var connection = MachineHarness(environment: Self.environment)
        connection.advance(to: 200)
        connection.send(get("/hello"))
        #expect(connection.statuses == [200])
        #expect(connection.deadline == 5200)
        connection.advance(to: 5199)
        #expect(!connection.closed)
        connection.advance(to: 5200)
        #expect(connection.closed)
    }

    @Test("the first byte of a later request starts its header timeout")
    func headerTimeoutOfALaterRequest() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send(get("/hello"))
        connection.advance(to: 3000)
        connection.send("GET /hel")
        #expect(connection.deadline == 4000, "header timeout from the first byte, not idle from the answer")
        connection.advance(to: 3999)
        #expect(!connection.closed)
        connection.advance(to: 4000)
        #expect(connection.closed)
        #expect(connection.statuses == [200])
    }

    @Test("a body that stops arriving is cut with 408 after the body timeout; the connection lingers, then closes")
    func stalledBody() {
        let environment = MachineHarness.environment(MachineHarness.configuration(idle: 60_000, body: 3000))
        var connection = MachineHarness(environment: environment)
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        connection.advance(to: 2000)
        connection.send("d")
        #expect(connection.deadline == 5000, "progress moves the stall deadline")
        connection.advance(to: 4999)
        #expect(connection.output.bytes.isEmpty)
        connection.advance(to: 5000)
        #expect(connection.statuses == [408])
        #expect(connection.written.contains("Connection: close\r\n"))
        #expect(connection.halfClosed, "half-closed so the client reads the 408")
        #expect(!connection.closed)
        #expect(connection.deadline == 7000, "lingers 2 s")
        connection.advance(to: 7000)
        #expect(connection.closed)
    }

    @Test("a body slower than the minimum rate over a window is cut with 408, a faster one is not")
    func minimumRate() {
        // 100 bytes per second over 1 s windows: at least 100 bytes in every window.
        let environment = MachineHarness.environment(MachineHarness.configuration(idle: 60_000, minimumRate: 100, window: 1000))
        var fast = MachineHarness(environment: environment)
        var slow = MachineHarness(environment: environment)
        let head = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 400\r\n\r\n"
        fast.send(head)
        slow.send(head)
        for step in 1...10 {
            let t = UInt64(step) * 250
            fast.advance(to: t)
            slow.advance(to: t)
            fast.send(patternBytes(40))      // 160 bytes a second
            if !slow.closed, slow.statuses.isEmpty { slow.send(patternBytes(20)) }   // 80 bytes a second
        }
        #expect(slow.statuses == [408], "60 bytes in the first window")
        #expect(fast.statuses == [200], "the steady body completes")
    }

    @Test("time spent waiting for a busy sink does not count against the body's rate")
    func sinkTimeDoesNotCount() {
        let environment = MachineHarness.environment(MachineHarness.configuration(idle: 60_000, minimumRate: 100, window: 1000))
        var connection = MachineHarness(environment: environment)
        connection.send("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "a", count: 150))
        #expect(connection.pieces.count == 1)
        #expect(connection.deadline == 0, "no deadline while the sink has the piece")
        connection.advance(to: 10_000)
        let wanted = connection.sinkTookPiece()
        #expect(wanted)
        #expect(connection.deadline == 11_000, "a new window from when the sink returned")
        connection.advance(to: 11_000)
        #expect(connection.statuses == [408])
    }

    @Test("a client that stops reading is cut after the write timeout of no progress; progress moves it")
    func writeStall() {
        var connection = MachineHarness(environment: Self.environment)
        connection.output.capacity = 1000
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 50000\r\n\r\n" + String(repeating: "b", count: 50_000))
        #expect(connection.interest == .write)
        #expect(connection.deadline == 2000)
        connection.advance(to: 1500)
        connection.drain(1000)
        #expect(connection.deadline == 3500, "2 s from the last progress")
        connection.advance(to: 3499)
        #expect(!connection.closed)
        connection.advance(to: 3500)
        #expect(connection.closed)
        #expect(connection.output.bytes.count == 2000)
    }

    @Test("a long download is not cut by the idle timeout it outlasted: idle counts from the last byte sent")
    func idleAfterLongWrite() {
        var connection = MachineHarness(environment: Self.environment)
        connection.output.capacity = 1000
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 20000\r\n\r\n" + String(repeating: "c", count: 20_000))
        for step in 1...20 {
            connection.advance(to: UInt64(step) * 1000)
            connection.drain(1000)
        }
        #expect(!connection.closed, "20 s of writing against a 5 s idle timeout")
        connection.drain()
        #expect(connection.statuses == [200])
        #expect(connection.deadline == 25_000)
    }
}
