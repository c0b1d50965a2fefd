import Foundation
import GeoAlarmSystem
import GeoAlarmTestSupport
import Testing

/// sd_notify(3)'s protocol: one datagram of NAME=value lines to the socket NOTIFY_SOCKET names,
/// a path or a name in the abstract namespace.
struct ServiceManagerTests {
    @Test(arguments: [false, true])
    func fieldsReachTheSocketAsOneMessage(abstract: Bool) throws {
        let socket = try NotifySocket(abstract: abstract)
        let manager = try #require(try ServiceManager(environment: ["NOTIFY_SOCKET": socket.address]))
        try manager.notify(["READY=1", ServiceManager.status("watching 5 reminders")])
        #expect(socket.next() == ["READY=1", "STATUS=watching 5 reminders"])
        try manager.notify(["STOPPING=1"])
        #expect(socket.next() == ["STOPPING=1"])
    }

    @Test func withoutTheVariableThereIsNoneToTell() throws {
        #expect(try ServiceManager(environment: [:]) == nil)
        #expect(try ServiceManager(environment: ["NOTIFY_SOCKET": ""]) == nil)
    }

    @Test func aSocketThatIsNotThereOrCannotBeIsAnErrorNamingItsCall() throws {
        let gone = try #require(try ServiceManager(environment: ["NOTIFY_SOCKET": "/nonexistent/notify"]))
        #expect(throws: SystemError(call: "sendto", code: ENOENT)) { try gone.notify(["READY=1"]) }
        let long = try #require(try ServiceManager(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 200)]))
        #expect(throws: SystemError(call: "socket address", code: ENAMETOOLONG)) { try long.notify(["READY=1"]) }
    }

    @Test func aStatusIsOneLineWhateverItQuotes() {
        #expect(ServiceManager.status("reload failed:\nline 3\r\nREADY=1") == "STATUS=reload failed: line 3 READY=1")
    }
}
