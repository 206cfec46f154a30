import DepotTestSupport
import Foundation
import HTTP
import Server
import Testing

extension ServerTests {
    @Suite("Engine: many idle connections")
    struct CapacityTests {
        /// Both ends live in this process, so the limit must allow two descriptors per connection.
        static func raiseDescriptorLimit(to wanted: UInt) {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            if limit.rlim_cur < wanted {
                limit.rlim_cur = min(UInt(limit.rlim_max), wanted)
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
        }

        /// The memory per connection is measured on a server in a process of its own (DepotServerTests,
        /// `IdleConnectionMemoryTests`): here other suites allocate in the same process at the same time.
        @Test("1,000 idle keep-alive connections are held open while another client is answered")
        func thousandIdleConnections() async throws {
            let count = 1000
            Self.raiseDescriptorLimit(to: UInt(2 * count + 512))
            // Counted exactly: on 127.0.0.2, so no other test's client (nginx still trying a stopped instance's
            // port, a port taken as free) can add connections (a clean-clone CI run counted 2 more than its own,
            // which stayed until the 60 s timeouts: most likely such a client, not confirmed).
            let server = try TestServer(host: "127.0.0.2", headerTimeout: 60_000, idleTimeout: 60_000)
            // Warm up: one connection through the whole path, so first-use allocations are not counted.
            var warm: [RawHTTPConnection] = []
            for _ in 0..<20 {
                let connection = try server.connect()
                connection.send(get("/hello"))
                _ = try connection.readResponse()
                warm.append(connection)
            }
            warm.removeAll()
            #expect(await eventually { server.server.openConnections == 0 })

            var connections: [RawHTTPConnection] = []
            connections.reserveCapacity(count)
            let before = residentBytes()
            for _ in 0..<count {
                let connection = try server.connect()
                connection.send(get("/hello"))
                let response = try connection.readResponse()
                #expect(response.status == 200)
                connections.append(connection)
            }
            let after = residentBytes()
            let perConnection = (after - before) / count
            print("[capacity] VmRSS \(before / 1024) KiB → \(after / 1024) KiB for \(count) idle keep-alive connections: "
                  + "\(perConnection) bytes per connection (server and client ends together)")
            #expect(server.server.openConnections == count)

            // Another client is still answered promptly, and so is an old idle one.
            let fresh = try server.connect()
            for _ in 0..<5 {
                fresh.send(get("/hello"))
                #expect(try fresh.readResponse(timeout: 2).status == 200)
            }
            connections[0].send(get("/hello"))
            #expect(try connections[0].readResponse(timeout: 2).status == 200)
            connections[count - 1].send(get("/hello"))
            #expect(try connections[count - 1].readResponse(timeout: 2).status == 200)

            connections.removeAll()
            // 999 closes are noticed within a second alone; a saturated CI machine has taken more than 5 s.
            #expect(await eventually(attempts: 6000) { server.server.openConnections == 1 },
                    "closed clients are forgotten (\(server.server.openConnections) still open)")
            await server.stop()
        }
    }
}
