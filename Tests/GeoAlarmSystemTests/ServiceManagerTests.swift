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

    /// The unit the agent runs as, from its control group: a system unit, one of a user's
    /// manager, under cgroups v2 or v1 (systemd's own hierarchy); none outside a service.
    @Test func theUnitIsTheInnermostServiceOfTheControlGroup() {
        let system = RunningUnit(cgroup: "0::/system.slice/geoalarm-headless.service\n")
        #expect(system == RunningUnit(name: "geoalarm-headless.service", isUsers: false))
        #expect(system?.restartCommand == "systemctl restart geoalarm-headless.service")
        let users = RunningUnit(cgroup: "0::/user.slice/user-1000.slice/user@1000.service/app.slice/geoalarm.service\n")
        #expect(users == RunningUnit(name: "geoalarm.service", isUsers: true))
        #expect(users?.restartCommand == "systemctl --user restart geoalarm.service")
        let hybrid = "12:pids:/system.slice/other.service\n1:name=systemd:/system.slice/geoalarm-headless.service\n"
        #expect(RunningUnit(cgroup: hybrid)?.name == "geoalarm-headless.service", "systemd's hierarchy, not another controller's")
        for outside in ["0::/user.slice/user-1000.slice/session-2.scope\n", "0::/\n", "", "garbage", "1:cpu:/a.service\n"] {
            #expect(RunningUnit(cgroup: outside) == nil, "\(outside)")
        }
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
