package registry

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// HostPort is one named port of an instance and the agent's port it took.
type HostPort struct {
	Name string
	Port uint32
}

// HostPorts are an instance's host ports, ordered by name. They are a
// slice, not a map, because an instance has one or two and a fleet has
// 100,000 instances: a map costs about 100 B more each. In JSON they are
// the object {"name": port}, as a map was.
type HostPorts []HostPort

// NewHostPorts orders ports by name, in place, and returns them; nil when
// there are none.
func NewHostPorts(ports []HostPort) HostPorts {
	if len(ports) == 0 {
		return nil
	}
	slices.SortFunc(ports, func(a, b HostPort) int { return strings.Compare(a.Name, b.Name) })
	return ports
}

// Get returns the host port named name.
func (p HostPorts) Get(name string) (uint32, bool) {
	i, found := slices.BinarySearchFunc(p, name, func(hp HostPort, name string) int { return strings.Compare(hp.Name, name) })
	if !found {
		return 0, false
	}
	return p[i].Port, true
}

// Map returns the ports as a map name → port, as the API shows them.
func (p HostPorts) Map() map[string]uint32 {
	if p == nil {
		return nil
	}
	m := make(map[string]uint32, len(p))
	for _, hp := range p {
		m[hp.Name] = hp.Port
	}
	return m
}

// MarshalJSON writes the object {"name": port}, names in order; null
// for none, as a nil map.
func (p HostPorts) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	out := []byte{'{'}
	for i, hp := range p {
		if i > 0 {
			out = append(out, ',')
		}
		name, err := json.Marshal(hp.Name)
		if err != nil {
			return nil, err
		}
		out = append(append(out, name...), ':')
		out = strconv.AppendUint(out, uint64(hp.Port), 10)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the object {"name": port}.
func (p *HostPorts) UnmarshalJSON(data []byte) error {
	var m map[string]uint32
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	ports := make([]HostPort, 0, len(m))
	for name, port := range m {
		ports = append(ports, HostPort{Name: name, Port: port})
	}
	*p = NewHostPorts(ports)
	return nil
}
