package devcluster

import (
	"net"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// A process-mode agent offers no port another program on the machine
// holds (its instance would fail with "address already in use"): a TCP
// listener and a bound UDP socket are seen in the kernel's tables, and an
// offer's ranges are split around them, the held ports kept apart for a
// later offer.
func TestOffersLeaveOutBusyHostPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcpPort, udpPort := uint64(ln.Addr().(*net.TCPAddr).Port), uint64(udp.LocalAddr().(*net.UDPAddr).Port)
	busy := busyHostPorts()
	if !busy[tcpPort] || !busy[udpPort] {
		t.Fatalf("busy host ports lack the listener %d or the UDP socket %d (%d ports seen)", tcpPort, udpPort, len(busy))
	}

	cpus := mesos.Resource{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}}
	ports := func(ranges ...mesos.Value_Range) mesos.Resource {
		return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: ranges}}
	}
	offered, held := withoutBusyPorts(mesos.Resources{cpus, ports(mesos.Value_Range{Begin: 31000, End: 31010}, mesos.Value_Range{Begin: 31020, End: 31020})},
		map[uint64]bool{31000: true, 31005: true, 31020: true, 8080: true})
	if got, want := formatResources(offered), "cpus:2; ports:[31001-31004, 31006-31010]"; got != want {
		t.Errorf("offered %s, want %s", got, want)
	}
	if got, want := formatResources(held), "ports:[31000-31000, 31005-31005, 31020-31020]"; got != want {
		t.Errorf("held %s, want %s", got, want)
	}
	offered, held = withoutBusyPorts(mesos.Resources{cpus, ports(mesos.Value_Range{Begin: 31000, End: 31000})}, map[uint64]bool{31000: true})
	if got := formatResources(offered); got != "cpus:2" || len(held) != 1 {
		t.Errorf("every port busy: offered %s, held %s; want only the cpus offered", got, formatResources(held))
	}
}
