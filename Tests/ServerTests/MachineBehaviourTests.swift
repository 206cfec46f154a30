import Foundation
import HTTP
import Server
import Testing

/// What the connection state machine does with requests, without sockets: ordering, batching, framing,
/// the body budget, and the engine's own refusals.
@Suite("Connection state machine: requests and answers")
struct MachineBehaviourTests {
    static let environment = MachineHarness.environment(MachineHarness.configuration())

    @Test("pipelined answers leave in one write, in order")
    func batchedPipelining() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send(get("/hello") + get("/status?code=204") + get("/hello"))
        #expect(connection.statuses == [200, 204, 200])
        #expect(connection.output.writes == 1, "one write for the three answers")
    }

    @Test("an answer computed off the loop holds back the pipelined ones behind it")
    func laterKeepsOrder() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send(get("/hello") + get("/later?tag=x") + get("/remote"))
        #expect(connection.statuses == [200])
        #expect(connection.later.count == 1)
        #expect(connection.interest == .none, "nothing is read while the reply is computed")
        connection.replyLater(TestResponder.text("later x"))
        #expect(connection.statuses == [200, 200, 200])
        #expect(connection.written.contains("later x\r\n") || connection.written.contains("later x"))
        let text = connection.written
        #expect(text.range(of: "later x")!.lowerBound < text.range(of: "127.0.0.1:1")!.lowerBound)
    }

    @Test("Server comes from the configuration; Date from the loop; HEAD keeps Content-Length and drops the body")
    func engineFields() {
        var named = MachineHarness(environment: Self.environment)
        named.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(named.written.contains("\r\nServer: depot\r\n"))
        #expect(named.written.contains("\r\nDate: Fri, 15 Jan 2027 08:00:00 GMT\r\n"))
        #expect(named.written.contains("\r\nContent-Length: 6\r\n"))
        #expect(named.written.hasSuffix("\r\n\r\n"))
        let anonymous = MachineHarness.environment(MachineHarness.configuration(serverName: nil))
        var plain = MachineHarness(environment: anonymous)
        plain.send(get("/hello"))
        #expect(!plain.written.contains("Server:"))
    }

    @Test("100 Continue goes out before the body is read, then the answer")
    func expectContinue() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(connection.written == "HTTP/1.1 100 Continue\r\n\r\n")
        connection.send("hello")
        #expect(connection.statuses == [100, 200])
        #expect(connection.written.hasSuffix("\r\n\r\nhello"))
    }

    @Test("the engine's refusals reach the responder as ProtocolError, with status, reason and Retry-After")
    func protocolErrors() {
        let recorder = RecordingResponder()
        let environment = MachineHarness.environment(MachineHarness.configuration(budget: 100), responder: recorder)
        var malformed = MachineHarness(environment: environment)
        malformed.send("GET /x HTTP/1.1\r\n\r\n")
        var tooLarge = MachineHarness(environment: environment)
        tooLarge.send("POST /collect HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n")
        var overBudget = MachineHarness(environment: environment)
        overBudget.send("POST /collect HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n")
        let errors = recorder.errors
        #expect(errors.map(\.kind) == [.malformed, .bodyTooLarge, .overloaded])
        #expect(errors.map(\.status) == [400, 413, 503])
        #expect(errors.map(\.reason) == ["Bad Request", "Content Too Large", "Service Unavailable"])
        #expect(overBudget.written.contains("\r\nRetry-After: 2\r\n"))
        for connection in [malformed, tooLarge, overBudget] {
            #expect(connection.written.contains("\r\nConnection: close\r\n"))
            #expect(connection.halfClosed, "lingers so the answer is read")
        }
    }

    @Test("the body budget: a body that does not fit is refused before it is read; the budget comes back after the answer")
    func bodyBudget() {
        let budget = BodyBudget(capacity: 1000)
        let environment = MachineHarness.environment(MachineHarness.configuration(budget: 1000), budget: budget)
        var first = MachineHarness(environment: environment)
        first.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 800\r\n\r\n" + String(repeating: "a", count: 100))
        #expect(budget.inUse == 800)
        var second = MachineHarness(environment: environment)
        second.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 300\r\nExpect: 100-continue\r\n\r\n")
        #expect(second.statuses == [503], "no 100 Continue: the body is not wanted")
        var small = MachineHarness(environment: environment)
        small.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n" + String(repeating: "s", count: 200))
        #expect(small.statuses == [200], "what still fits is admitted")
        #expect(budget.inUse == 800)
        first.output.capacity = 10
        first.send(String(repeating: "a", count: 700))
        #expect(budget.inUse == 800, "held until the answer is sent")
        first.drain()
        #expect(first.statuses == [200])
        #expect(budget.inUse == 0)
    }

    @Test("a chunked body takes from the budget as it arrives, and is refused with 503 when it would pass it")
    func chunkedBudget() {
        let budget = BodyBudget(capacity: 100)
        let environment = MachineHarness.environment(MachineHarness.configuration(budget: 100), budget: budget)
        var connection = MachineHarness(environment: environment)
        connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + String(repeating: "x", count: 64) + "\r\n")
        #expect(budget.inUse == 64)
        connection.send("40\r\n" + String(repeating: "y", count: 64) + "\r\n")
        #expect(connection.statuses == [503])
        #expect(budget.inUse == 0, "given back when refused")
    }

    @Test("a closed connection gives its budget back; a stream's sink is aborted")
    func closeReleases() {
        let budget = BodyBudget(capacity: 1000)
        let environment = MachineHarness.environment(MachineHarness.configuration(budget: 1000), budget: budget)
        var collecting = MachineHarness(environment: environment)
        collecting.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\nabc")
        #expect(budget.inUse == 500)
        collecting.peerCloses()
        #expect(collecting.closed)
        #expect(budget.inUse == 0)
        var streaming = MachineHarness(environment: environment)
        streaming.send("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\nabc")
        #expect(streaming.pieces == [Array("abc".utf8)])
        let wanted = streaming.sinkTookPiece()
        #expect(wanted)
        streaming.peerCloses()
        #expect(streaming.aborts == 1)
        #expect(streaming.closed)
    }

    @Test("a peer that hangs up while its sink is busy is closed when the sink returns, and the sink is not wanted")
    func hangUpWhileSinkBusy() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /stream HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\nabc")
        connection.machine.hungUp()
        connection.run()
        #expect(connection.interest == .detached)
        #expect(!connection.closed)
        let wanted = connection.sinkTookPiece()
        #expect(!wanted, "the shell aborts the sink after its consume")
        #expect(connection.closed)
        #expect(connection.aborts == 0, "no abort overlapping the consume")
    }

    @Test("stop: an idle connection closes at once, a busy one after its answer")
    func stop() {
        var idle = MachineHarness(environment: Self.environment)
        idle.send(get("/hello"))
        idle.machine.stopRequested()
        idle.run()
        #expect(idle.closed)
        var busy = MachineHarness(environment: Self.environment)
        busy.send(get("/later"))
        busy.machine.stopRequested()
        busy.run()
        #expect(!busy.closed)
        busy.replyLater(TestResponder.text("done"))
        #expect(busy.written.contains("Connection: close"))
        #expect(busy.closed)
    }
}

/// Records the protocol errors the engine hands over; `/collect` collects up to 1,000 bytes.
final class RecordingResponder: Responder, @unchecked Sendable {
    private(set) var errors: [ProtocolError] = []

    func handle(_ head: RequestHead, context: RequestContext) -> Handling {
        .collectBody(limit: 1000) { _ in .response(TestResponder.text("ok")) }
    }

    func errorResponse(for error: ProtocolError) -> Response {
        errors.append(error)
        return Response(status: error.status, body: .bytes(Array(error.message.utf8)))
    }
}
