import Foundation
import HTTP
import Server
import Testing

/// `Handling.decideLater`: the responder decides off the loop how to treat a request (its checks read the disk);
/// the machine reads nothing of the body meanwhile and then treats the request as the decision says.
@Suite("Connection state machine: handling decided off the loop")
struct MachineDecisionTests {
    static let environment = MachineHarness.environment(MachineHarness.configuration())

    @Test("no 100 Continue and no body is read until the decision; then the body streams to its sink")
    func streamAfterDecision() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /decide HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        #expect(connection.decisions.count == 1)
        #expect(connection.written.isEmpty, "100 Continue waits for the decision")
        #expect(connection.interest == .none, "nothing is read while the decision is made")
        #expect(connection.machine.state == .waitingForHandling)
        let taken = connection.decided(.streamBody(limit: 100, sink: CountingSink()))
        #expect(taken)
        #expect(connection.written == "HTTP/1.1 100 Continue\r\n\r\n")
        #expect(connection.interest == .read)
        connection.send("hello")
        #expect(connection.pieces == [Array("hello".utf8)])
        connection.sinkTookPiece()
        #expect(connection.later.count == 1, "the sink's finish is the answer")
    }

    @Test("bytes that came with the head wait for the decision; a refusal drops the small body and answers the next request")
    func refusalKeepsTheConnection() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /decide HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello" + get("/hello"))
        #expect(connection.decisions.count == 1)
        #expect(connection.statuses.isEmpty, "the pipelined request waits behind the decision")
        connection.decided(.reply(.response(TestResponder.text("refused"))))
        #expect(connection.statuses == [200, 200])
        #expect(connection.written.contains("refused"))
        #expect(connection.written.hasSuffix("hello\n"))
        #expect(!connection.closed)
    }

    @Test("a body larger than the decided limit is refused with 413 as if decided at once")
    func limitAfterDecision() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /decide HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n")
        connection.decided(.streamBody(limit: 100, sink: CountingSink()))
        #expect(connection.statuses == [413])
        #expect(connection.aborts == 1, "the sink that will get no body is aborted")
    }

    @Test("the peer closing while the decision is made: a body it cannot finish ends the connection, its sink aborted")
    func peerClosedDuringDecision() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /decide HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n")
        connection.peerCloses()
        #expect(!connection.closed, "the request is still being decided")
        connection.decided(.streamBody(limit: 100, sink: CountingSink()))
        #expect(connection.closed)
        #expect(connection.aborts == 1)
        #expect(connection.pieces.isEmpty)
    }

    @Test("a decision that comes back after the connection closed is not taken")
    func decisionAfterClose() {
        var connection = MachineHarness(environment: Self.environment)
        connection.send("POST /decide HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n")
        connection.machine.hungUp()
        connection.run()
        #expect(connection.closed)
        let taken = connection.decided(.streamBody(limit: 100, sink: CountingSink()))
        #expect(!taken, "the caller aborts its sink")
        #expect(connection.pieces.isEmpty)
    }
}
