import GeoAlarmGeoClue
import Testing

/// Where the system bus's socket is, as the GeoClue source watches for it while there is no bus.
struct SystemBusAddressTests {
    @Test func theFirstUnixPathIsTheSocket() {
        #expect(SystemBusAddress.socketPath("unix:path=/run/dbus/system_bus_socket") == "/run/dbus/system_bus_socket")
        #expect(SystemBusAddress.socketPath("unix:guid=0123,path=/tmp/rig/bus") == "/tmp/rig/bus")
        #expect(SystemBusAddress.socketPath("unix:path=/tmp/a%20b/bus;tcp:host=localhost,port=1") == "/tmp/a b/bus")
    }

    @Test func noAddressIsDBussOwnPlace() {
        #expect(SystemBusAddress.socketPath(nil) == SystemBusAddress.defaultSocket)
        #expect(SystemBusAddress.socketPath("") == SystemBusAddress.defaultSocket)
    }

    @Test func anAddressThatNamesNoFileFirstHasNone() {
        #expect(SystemBusAddress.socketPath("unix:abstract=/tmp/dbus-1") == nil)
        #expect(SystemBusAddress.socketPath("tcp:host=localhost,port=4000;unix:path=/run/bus") == nil)
        #expect(SystemBusAddress.socketPath("unix:path=/tmp/%zz") == nil)
        #expect(SystemBusAddress.socketPath("unix:path=/tmp/%4") == nil)
    }
}
