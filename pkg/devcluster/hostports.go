package devcluster

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// procNetFiles are the kernel's socket tables the host's busy ports are
// read from.
var procNetFiles = []string{"/proc/net/tcp", "/proc/net/tcp6", "/proc/net/udp", "/proc/net/udp6"}

// busyHostPorts is the set of ports this machine's sockets hold: TCP
// listeners and bound UDP sockets, of every process. Agents of a process
// mode dev cluster share the machine with everything else on it, which a
// real agent's --resources would leave out of its ports; an offered port
// some other program holds fails its instance with "address already in
// use". nil when the tables cannot be read.
func busyHostPorts() map[uint64]bool {
	busy := map[uint64]bool{}
	read := false
	for _, path := range procNetFiles {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		read = true
		tcp := strings.Contains(path, "tcp")
		scanner := bufio.NewScanner(f)
		scanner.Scan() // the header
		for scanner.Scan() {
			// sl local_address rem_address st …; local_address is
			// HEXADDR:HEXPORT, st 0A is TCP_LISTEN.
			fields := strings.Fields(scanner.Text())
			if len(fields) < 4 || tcp && fields[3] != "0A" {
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			if port, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && port > 0 {
				busy[port] = true
			}
		}
		f.Close()
	}
	if !read {
		return nil
	}
	return busy
}

// withoutBusyPorts splits rs into what may be offered and the ports of
// rs that busy holds.
func withoutBusyPorts(rs mesos.Resources, busy map[uint64]bool) (offered, held mesos.Resources) {
	offered = cloneResources(rs)
	for i := range offered {
		r := &offered[i]
		if r.Name != "ports" || r.Ranges == nil {
			continue
		}
		var free, taken []mesos.Value_Range
		for _, rg := range r.Ranges.Range {
			begin := rg.Begin
			for port := rg.Begin; port <= rg.End; port++ {
				if !busy[port] {
					continue
				}
				if port > begin {
					free = append(free, mesos.Value_Range{Begin: begin, End: port - 1})
				}
				taken = append(taken, mesos.Value_Range{Begin: port, End: port})
				begin = port + 1
			}
			if begin <= rg.End {
				free = append(free, mesos.Value_Range{Begin: begin, End: rg.End})
			}
		}
		if len(taken) == 0 {
			continue
		}
		h := *r
		h.Ranges = &mesos.Value_Ranges{Range: taken}
		held = append(held, h)
		r.Ranges = &mesos.Value_Ranges{Range: free}
	}
	offered = slicesDeleteEmptyRanges(offered)
	return offered, held
}

// slicesDeleteEmptyRanges drops a ports resource left with no range.
func slicesDeleteEmptyRanges(rs mesos.Resources) mesos.Resources {
	out := rs[:0]
	for _, r := range rs {
		if r.Ranges != nil && len(r.Ranges.Range) == 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}
